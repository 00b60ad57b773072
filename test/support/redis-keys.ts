// The implementation lives in scripts/ so that scripts, which are built without test/, can use it too.
export { dropRedisKeys } from '../../scripts/redis-keys';
