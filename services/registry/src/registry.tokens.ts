/** Injection tokens of the registry's configuration objects. */
export const REGISTRY_CONFIG = Symbol('REGISTRY_CONFIG');
export const REGISTRY_SETTINGS = Symbol('REGISTRY_SETTINGS');
