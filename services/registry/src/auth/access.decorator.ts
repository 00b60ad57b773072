// The rule and its decorator are shared with the gateway (libs/auth); the registry's controllers import them here.
export { Access, ACCESS_METADATA, type AccessRule } from '@toolhost/auth';
