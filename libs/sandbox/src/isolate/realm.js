// Evaluated once per isolate after the SES shim and before the runtime prelude (plain JavaScript: it runs inside the
// isolate, not in Node). It owns what tool code sees: it repairs and freezes the intrinsics (SES lockdown in its two
// halves, with toolhost's changes in between) and leaves the prelude `__toolhost_realm`: the globals every
// compartment is given and the hint for errors from frozen built-ins. The list of what is reachable is in
// docs/sandbox.md ("Realm surface"), pinned by realm-surface.int-spec.ts; what differs from Node is in
// realm-compat.int-spec.ts.
(function () {
  'use strict';
  const memoryMb = globalThis.__toolhost_memory_mb;
  const memoryBytes = memoryMb * 1024 * 1024;
  const { apply, construct } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;

  // Writing into a long array with holes (`new Array(1e8).fill(0)`, even `.fill(0, 0, 10)`, or `copyWithin`) makes
  // V8 allocate a backing store for its whole length at once: up to a point that passed isolated-vm's memory limit
  // (240 MB with 64 allowed), past it V8 aborted the whole process (isolated-vm#107), taking every run in it along;
  // on an array-like object each index written is a property. Such a write is refused up front with a RangeError,
  // as `new ArrayBuffer(huge)` is, when it cannot fit at 8 bytes an element: the whole length for an array, the
  // range written for an array-like. A plain index loop does the same and cannot be covered here; the executor's
  // watchdogs contain it. Ranges are computed here once and passed on as numbers, so a `valueOf` cannot answer
  // differently the second time.
  const toLength = (value) => {
    const n = Math.trunc(+value) || 0;
    return n < 0 ? 0 : Math.min(n, Number.MAX_SAFE_INTEGER);
  };
  const toRelative = (value, length, fallback) => {
    // Unary plus throws on a BigInt, as the specification's ToIntegerOrInfinity does.
    const n = value === undefined ? fallback : Math.trunc(+value) || 0;
    return n < 0 ? Math.max(length + n, 0) : Math.min(n, length);
  };
  const refuseLong = (method, elements) => {
    throw new RangeError(
      `Array.prototype.${method}: an array of ${elements} elements does not fit in ${memoryMb} MB of memory`,
    );
  };
  const originalFill = Array.prototype.fill;
  const originalCopyWithin = Array.prototype.copyWithin;
  const methods = {
    // One declared parameter each, as in the specification (fill.length is 1, copyWithin.length is 2).
    fill(value) {
      if (this === null || this === undefined) return apply(originalFill, this, arguments);
      const object = Object(this);
      const length = toLength(object.length);
      const from = toRelative(arguments[1], length, 0);
      const to = toRelative(arguments[2], length, length);
      const written = Array.isArray(object) ? length : to - from;
      if (written * 8 > memoryBytes) refuseLong('fill', written);
      return apply(originalFill, object, [value, from, to]);
    },
    copyWithin(target, start) {
      if (this === null || this === undefined) return apply(originalCopyWithin, this, arguments);
      const object = Object(this);
      const length = toLength(object.length);
      const to = toRelative(target, length, 0);
      const from = toRelative(start, length, 0);
      const end = toRelative(arguments[2], length, length);
      const count = Math.max(0, Math.min(end - from, length - to));
      const written = Array.isArray(object) ? length : count;
      if (written * 8 > memoryBytes) refuseLong('copyWithin', written);
      return apply(originalCopyWithin, object, [to, from, end]);
    },
  };
  for (const name of ['fill', 'copyWithin']) {
    defineProperty(Array.prototype, name, {
      value: methods[name],
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  // Two more built-ins allocate their whole result at once, past the limit, many times the size of their input:
  // `split` with a string separator (each part is an 8-byte slot: "x".repeat(2 ** 26).split("") held 512 MB in a
  // 64 MB tool, and the run succeeded) and JSON.parse (a 32 MB text of numbers held 400 MB). A split that may give
  // more parts than fit is counted first and refused when they cannot; a JSON text of more than a quarter of the
  // memory in characters is refused (its value would not fit either).
  const originalSplit = String.prototype.split;
  const originalParse = JSON.parse;
  const splitter = {
    split(separator, limit) {
      if (typeof separator !== 'string' || this === null || this === undefined) {
        return apply(originalSplit, this, arguments);
      }
      const string = `${this}`;
      const most = limit === undefined ? 2 ** 32 - 1 : limit >>> 0;
      const room = Math.floor(memoryBytes / 8);
      if (Math.min(most, string.length / Math.max(separator.length, 1) + 1) > room) {
        let parts = 1;
        if (separator === '') parts = Math.min(most, string.length);
        else
          for (
            let at = string.indexOf(separator);
            at !== -1 && parts <= room;
            at = string.indexOf(separator, at + separator.length)
          )
            parts++;
        if (Math.min(parts, most) > room) {
          throw new RangeError(
            `String.prototype.split: more than ${room} parts do not fit in ${memoryMb} MB of memory`,
          );
        }
      }
      return apply(originalSplit, string, [separator, limit]);
    },
    parse(text, reviver) {
      const string = `${text}`;
      if (string.length * 4 > memoryBytes) {
        throw new RangeError(
          `JSON.parse: a text of ${string.length} characters does not fit in ${memoryMb} MB of memory once parsed`,
        );
      }
      return apply(originalParse, JSON, [string, reviver]);
    },
  };
  defineProperty(String.prototype, 'split', {
    value: splitter.split,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  defineProperty(JSON, 'parse', { value: splitter.parse, writable: true, enumerable: false, configurable: true });

  // JSON.stringify on Node 22's V8 (12.4) builds its text outside the isolate's heap limit: a 300 MB text succeeded in a
  // 64 MB tool (+583 MB of RSS), and a value that doubles at each level (`a = [a, a]` thirty times) held 540 MB until
  // its time limit, where Node 20's V8 ends both MEMORY_LIMIT. On such a V8 (the host says which) the text is counted as
  // it is made: every value passes through a replacer (the tool's own, if any, first) that adds the least it can add to
  // the text, and past half the memory in characters the call is refused with a RangeError. The count is a lower bound
  // (a number counts one character, a string its length and quotes, escapes not at all), so the text reaches at most a
  // few times that before the refusal. An array replacer (a property list) is kept exactly: each object it applies to is
  // serialized through a view that lists the list's keys, in its order, and reads them from the object. The price is
  // V8's slower path with a replacer: about twice the time of a plain JSON.stringify, which Node 20 does not pay.
  const originalStringify = JSON.stringify;
  const maxTextChars = Math.floor(memoryBytes / 2);
  // Node 22's V8 has JSON.rawJSON: a raw text's object adds its text.
  /** @type {((value: unknown) => boolean) | undefined} */
  const isRawJSON = /** @type {any} */ (JSON).isRawJSON;
  const { isArray } = Array;
  const { get: getProperty } = Reflect;
  const stringValue = String.prototype.valueOf;
  const numberValue = Number.prototype.valueOf;
  // The replacer array as the specification reads it: strings, numbers and their wrappers, each once, in order.
  const propertyList = (replacer) => {
    const list = new Set();
    const length = toLength(replacer.length);
    for (let index = 0; index < length; index += 1) {
      const item = replacer[index];
      if (typeof item === 'string') list.add(item);
      else if (typeof item === 'number') list.add(`${item}`);
      else if (item !== null && typeof item === 'object') {
        for (const unwrap of [stringValue, numberValue]) {
          try {
            apply(unwrap, item, []);
            list.add(`${item}`);
            break;
          } catch {
            // Not that kind of wrapper.
          }
        }
      }
    }
    return [...list];
  };
  const gapOf = (space) => {
    let gap = space;
    if (gap !== null && typeof gap === 'object') {
      try {
        gap = apply(numberValue, gap, []);
      } catch {
        try {
          gap = apply(stringValue, gap, []);
        } catch {
          // Neither: no gap.
        }
      }
    }
    if (typeof gap === 'number') return Math.min(10, Math.max(0, Math.trunc(gap) || 0));
    return typeof gap === 'string' ? Math.min(10, gap.length) : 0;
  };
  const stringifier = {
    stringify(value, replacer, space) {
      const userReplacer = typeof replacer === 'function' ? replacer : undefined;
      const list = userReplacer === undefined && isArray(replacer) ? propertyList(replacer) : undefined;
      const gap = gapOf(space);
      // The depth of each object entered, when indentation makes it count; the views made for the property list.
      const depths = gap > 0 ? new Map() : undefined;
      const views = list === undefined ? undefined : new Map();
      let counted = 0;
      const count = (chars) => {
        counted += chars;
        if (counted > maxTextChars) {
          throw new RangeError(
            `JSON.stringify: a text of more than ${maxTextChars} characters does not fit in ${memoryMb} MB of memory`,
          );
        }
      };
      const view = (object) => {
        let found = views.get(object);
        if (found === undefined) {
          found = new Proxy(
            {},
            {
              ownKeys: () => [...list],
              getOwnPropertyDescriptor: () => ({
                value: undefined,
                writable: true,
                enumerable: true,
                configurable: true,
              }),
              get: (_target, key) => getProperty(object, key),
            },
          );
          views.set(object, found);
        }
        return found;
      };
      const counting = function (key, raw) {
        const value = userReplacer === undefined ? raw : apply(userReplacer, this, [key, raw]);
        // 0 for the value itself (its holder is the wrapper JSON.stringify makes), 1 for its members, and so on.
        const depth = depths === undefined ? 0 : (depths.get(this) ?? -1) + 1;
        // The key (an object's, quoted, with its colon) or the comma before an element, and the indentation.
        count((isArray(this) ? 1 : key.length + 3) + (depth > 0 ? 1 + gap * depth : 0));
        if (typeof value === 'string') count(value.length + 2);
        else if (typeof value === 'number' || typeof value === 'boolean') count(1);
        else if (value === null) count(4);
        else if (typeof value === 'object') {
          if (isRawJSON !== undefined && apply(isRawJSON, JSON, [value])) {
            count(value.rawJSON.length);
            return value;
          }
          count(2);
          // What V8 serializes next, and so the holder its members are passed with.
          const holder = list !== undefined && !isArray(value) ? view(value) : value;
          depths?.set(holder, depth);
          return holder;
        }
        return value;
      };
      return apply(originalStringify, JSON, [value, counting, space]);
    },
  };
  if (globalThis.__toolhost_count_stringify === true) {
    defineProperty(JSON, 'stringify', {
      value: stringifier.stringify,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  // Listing the keys of a string or a typed array makes a string for every index: Object.keys of a 16 MB
  // Uint8Array grew the process by 775 MB and ran 54 s inside one built-in, past every time limit. A list that
  // cannot fit (24 bytes a key: an 8-byte slot and the smallest string) is refused up front. Arrays are left alone:
  // a long array can be sparse, and its keys are only the indices present.
  const typedArrayTag = getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), Symbol.toStringTag).get;
  const typedArrayLength = getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), 'length').get;
  const stringValueOf = String.prototype.valueOf;
  const keyCount = (target) => {
    if (typeof target === 'string') return target.length;
    if (target === null || typeof target !== 'object') return 0;
    if (apply(typedArrayTag, target, []) !== undefined) return apply(typedArrayLength, target, []);
    if (Object.prototype.toString.call(target) === '[object String]') {
      try {
        return apply(stringValueOf, target, []).length;
      } catch {
        return 0;
      }
    }
    return 0;
  };
  /** @type {[any, string[]][]} */
  const listers = [
    [Object, ['keys', 'values', 'entries', 'getOwnPropertyNames', 'getOwnPropertyDescriptors']],
    [Reflect, ['ownKeys']],
  ];
  for (const [namespace, names] of listers) {
    for (const name of names) {
      const original = namespace[name];
      const label = `${namespace === Object ? 'Object' : 'Reflect'}.${name}`;
      const lister = {
        [name](target) {
          const count = keyCount(target);
          if (count * 24 > memoryBytes) {
            throw new RangeError(`${label}: ${count} keys do not fit in ${memoryMb} MB of memory`);
          }
          return apply(original, namespace, arguments);
        },
      }[name];
      defineProperty(namespace, name, { value: lister, writable: true, enumerable: false, configurable: true });
    }
  }

  // A resizable ArrayBuffer reserves its maxByteLength outside isolated-vm's allocator, and `resize` commits it
  // there too: a 64 MB tool held 1 GiB that way. Fixed-size buffers are counted against the isolate's limit (an
  // allocation past it is a RangeError), so resizable ones are taken away: the constructor refuses maxByteLength.
  // The wrapper becomes the realm's ArrayBuffer before repairIntrinsics(), so SES hardens it as the intrinsic;
  // `buffer.constructor`, `instanceof`, subclasses and species behave as in Node.
  const OriginalArrayBuffer = ArrayBuffer;
  // Named ArrayBuffer, which is how V8 names its instances in messages (#<ArrayBuffer>).
  const SafeArrayBuffer = function ArrayBuffer(length) {
    if (new.target === undefined) throw new TypeError("Constructor ArrayBuffer requires 'new'");
    const options = arguments[1];
    if (options !== null && typeof options === 'object' && options.maxByteLength !== undefined) {
      throw new TypeError(
        'ArrayBuffer: resizable buffers (maxByteLength) are not available in toolhost, because their memory is not ' +
          "counted against the tool's memoryMb; allocate a new ArrayBuffer of the size you need and copy into it",
      );
    }
    return construct(OriginalArrayBuffer, [length], new.target);
  };
  {
    /** @type {Record<PropertyKey, PropertyDescriptor>} */
    const statics = Object.getOwnPropertyDescriptors(OriginalArrayBuffer);
    for (const key of Reflect.ownKeys(statics)) defineProperty(SafeArrayBuffer, key, statics[key]);
    defineProperty(OriginalArrayBuffer.prototype, 'constructor', { value: SafeArrayBuffer });
    defineProperty(globalThis, 'ArrayBuffer', { value: SafeArrayBuffer });
  }

  // Taken before repairIntrinsics(): in a Compartment, SES makes Date.now()/new Date() and Math.random() throw and
  // leaves Intl out, and it keeps WeakRef and FinalizationRegistry from compartments; tools get these originals.
  const OriginalDate = Date;
  const OriginalIntl = Intl;
  const originalRandom = Math.random;
  const OriginalWeakRef = WeakRef;

  // lockdown() in its two halves, so that the realm can be trimmed while the intrinsics are still mutable:
  // - errorTaming 'unsafe' keeps error.stack, which is how a USER_ERROR finds the line in the tool's own code;
  // - localeTaming 'unsafe' keeps toLocaleString, toLocaleDateString, localeCompare… honouring locales and options
  //   (SES swaps them for locale-blind versions, which silently changes what correct code computes);
  // - overrideTaming stays 'moderate' (a few named properties); Object.prototype is done below.
  repairIntrinsics({ errorTaming: 'unsafe', localeTaming: 'unsafe' });
  // SES installs harden as Object[Symbol.for('harden')] for libraries that look for it; tool code must not see it
  // (the surface is an allowlist), and nothing here looks it up.
  delete Object[Symbol.for('harden')];

  // The override mistake: once Object.prototype is frozen, assigning an ordinary object its own `hasOwnProperty`,
  // `toString` or `constructor` (`Object.assign({}, {hasOwnProperty: 3})`, `Child.prototype.constructor = Child`)
  // throws. Every data property of Object.prototype becomes an accessor whose setter defines the property on the
  // receiver instead, as SES does for the names it picks ('severe' would do this too, but also turns every method
  // of Map, Set and the typed arrays into accessors, which costs every call). The getter carries the value as
  // `originalValue`, so hardening reaches it. Assigning to an array or function a name its own prototype has
  // (`array.map = f`) still throws; docs/sandbox.md lists what remains.
  for (const key of Reflect.ownKeys(Object.prototype)) {
    const descriptor = getOwnPropertyDescriptor(Object.prototype, key);
    if (!('value' in descriptor)) continue;
    const { value } = descriptor;
    const accessor = getOwnPropertyDescriptor(
      {
        get [key]() {
          return value;
        },
        set [key](newValue) {
          if (this === Object.prototype) {
            throw new TypeError(`Cannot assign to read only property '${String(key)}' of 'Object.prototype'`);
          }
          if (Object.hasOwn(this, key)) this[key] = newValue;
          else defineProperty(this, key, { value: newValue, writable: true, enumerable: true, configurable: true });
        },
      },
      key,
    );
    defineProperty(accessor.get, 'originalValue', { value });
    defineProperty(Object.prototype, key, {
      get: accessor.get,
      set: accessor.set,
      enumerable: descriptor.enumerable,
      configurable: true,
    });
  }

  // Changing a built-in from tool code (a polyfill) fails, since they are frozen and shared by every run of the
  // tenant; the error says so and what to do instead. The reflective functions below throw it themselves; an
  // assignment or a delete fails inside V8, whose message the prelude completes with the same hint (`explain`).
  const HINT =
    'built-ins are frozen in toolhost (they are shared by every run): instead of changing one, write a helper ' +
    'function or a subclass (class MyArray extends Array), and use Object.defineProperty to give an object of ' +
    'your own a property that shadows a built-in one';
  const builtIns = new WeakMap();
  const refuse = (target, what) => new TypeError(`Cannot ${what} ${builtIns.get(target)}: ${HINT}`);
  const original = {
    defineProperty,
    defineProperties: Object.defineProperties,
    setPrototypeOf: Object.setPrototypeOf,
    assign: Object.assign,
  };
  // Each does what the original does and, only where that fails on a built-in, throws the explained error instead.
  const attempt = (name, args, what) => {
    try {
      return apply(original[name], Object, args);
    } catch (error) {
      if (builtIns.has(args[0])) throw refuse(args[0], what);
      throw error;
    }
  };
  const guarded = {
    defineProperty(target, key, descriptor) {
      return attempt('defineProperty', [target, key, descriptor], `define property ${String(key)} on`);
    },
    defineProperties(target, descriptors) {
      return attempt('defineProperties', [target, descriptors], 'define properties on');
    },
    setPrototypeOf(target, proto) {
      return attempt('setPrototypeOf', [target, proto], 'set the prototype of');
    },
    // Two named parameters keep Object.assign.length at 2; every source is passed on.
    assign(_target, _source) {
      return attempt('assign', [...arguments], 'assign properties to');
    },
  };
  // Each keeps its name and length; SES marks them native when it hardens them.
  for (const name of Reflect.ownKeys(guarded)) {
    defineProperty(Object, name, { value: guarded[name], writable: true, enumerable: false, configurable: true });
  }

  hardenIntrinsics();

  // A namespace object like the original (same descriptors, so Object.keys(Math) is [] as in Node), with some
  // properties replaced or left out.
  const namespace = (original, replace, omit) => {
    /** @type {Record<PropertyKey, PropertyDescriptor>} */
    const descriptors = Object.getOwnPropertyDescriptors(original);
    for (const key of omit) delete descriptors[key];
    for (const key of Reflect.ownKeys(replace)) descriptors[key].value = replace[key];
    return harden(Object.create(Object.getPrototypeOf(original), descriptors));
  };
  const SafeMath = namespace(Math, { random: originalRandom }, []);
  harden(OriginalDate);
  // Intl without V8's non-standard v8BreakIterator (Intl.Segmenter is the standard one).
  const SafeIntl = namespace(OriginalIntl, {}, ['v8BreakIterator']);
  // SES removes it for the threat of mutually suspicious code in one realm observing garbage collection; in toolhost
  // a realm holds one tenant, and a compartment one run.
  harden(OriginalWeakRef);

  // V8's FinalizationRegistry would call its cleanup callbacks as tasks outside any run, where no time limit holds
  // (a callback that loops would hold the tenant's isolate for good). The specification lets an implementation
  // never call them, and this one does not: register and unregister work, cleanup never runs.
  // The specification's CanBeHeldWeakly: objects, and symbols that are not registered.
  const canBeHeldWeakly = (value) =>
    (value !== null && (typeof value === 'object' || typeof value === 'function')) ||
    (typeof value === 'symbol' && Symbol.keyFor(value) === undefined);
  class FinalizationRegistry {
    #tokens = new WeakMap();
    constructor(cleanupCallback) {
      if (typeof cleanupCallback !== 'function') {
        throw new TypeError('FinalizationRegistry: cleanup must be callable');
      }
    }
    register(target, heldValue, unregisterToken) {
      if (!canBeHeldWeakly(target)) throw new TypeError('FinalizationRegistry.prototype.register: invalid target');
      if (target === heldValue) {
        throw new TypeError('FinalizationRegistry.prototype.register: target and holdings must not be same');
      }
      if (unregisterToken !== undefined) {
        if (!canBeHeldWeakly(unregisterToken)) {
          throw new TypeError(`FinalizationRegistry.prototype.register: invalid unregister token`);
        }
        this.#tokens.set(unregisterToken, true);
      }
      return undefined;
    }
    unregister(unregisterToken) {
      if (!canBeHeldWeakly(unregisterToken)) {
        throw new TypeError('FinalizationRegistry.prototype.unregister: invalid unregister token');
      }
      return this.#tokens.delete(unregisterToken);
    }
  }
  defineProperty(FinalizationRegistry.prototype, Symbol.toStringTag, { value: 'FinalizationRegistry' });
  harden(FinalizationRegistry);

  // structuredClone is a web API, not in V8: this is the HTML algorithm over what a realm without DOM objects holds.
  // The copy is made in the isolate, so it counts against the tool's memory like any other allocation.
  const TYPED_ARRAYS = {
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  };
  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const getter = (object, key) => getOwnPropertyDescriptor(object, key).get;
  const TypedArrayPrototype = Object.getPrototypeOf(Int8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, Symbol.toStringTag);
  const arrayBufferByteLength = getter(OriginalArrayBuffer.prototype, 'byteLength');
  const dataViewByteLength = getter(DataView.prototype, 'byteLength');
  const mapSize = getter(Map.prototype, 'size');
  const setSize = getter(Set.prototype, 'size');
  const regExpSource = getter(RegExp.prototype, 'source');
  const regExpFlags = getter(RegExp.prototype, 'flags');
  const brands = (fn, value) => {
    try {
      apply(fn, value, []);
      return true;
    } catch {
      return false;
    }
  };
  // Not this script's Error (SES's %InitialError%, whose prepareStackTrace setter changes V8's for the whole isolate,
  // every later run of the tenant included): the one compartments see, %SharedError%, which NativeErrors inherit from.
  // A thrown DataCloneError's constructor, and so its prototype, is reachable from tool code.
  class DataCloneError extends Object.getPrototypeOf(TypeError) {
    constructor(message) {
      super(message);
      this.code = 25;
    }
  }
  defineProperty(DataCloneError.prototype, 'name', { value: 'DataCloneError' });
  const uncloneable = (value) => {
    let shown;
    try {
      shown = typeof value === 'object' ? `#<${Object.prototype.toString.call(value).slice(8, -1)}>` : String(value);
    } catch {
      shown = 'the value';
    }
    return new DataCloneError(`${shown} could not be cloned.`);
  };
  // A method, so that like Node's it has no prototype and cannot be called with new.
  const { structuredClone } = {
    structuredClone(value) {
      if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
      const options = arguments[1];
      if (options !== undefined && options !== null) {
        const transfer = options.transfer;
        if (transfer !== undefined && [...transfer].length > 0) {
          throw new DataCloneError('structuredClone: transfer is not supported in toolhost');
        }
      }
      const memory = new Map();
      const clone = (input) => {
        if (typeof input === 'symbol' || typeof input === 'function') throw uncloneable(input);
        if (input === null || typeof input !== 'object') return input;
        if (memory.has(input)) return memory.get(input);
        const remember = (copy) => {
          memory.set(input, copy);
          return copy;
        };
        // Arrays and plain objects first, without a brand check (those throw, which is slow).
        if (Array.isArray(input)) {
          const copy = remember(new Array(input.length));
          // Object.keys lists an array's indices first, in order; the rest are its other own properties.
          const keys = Object.keys(input);
          for (let k = 0; k < keys.length; k++) {
            const key = keys[k];
            const value = input[key];
            const entry =
              value !== null && (typeof value === 'object' || typeof value === 'function' || typeof value === 'symbol')
                ? clone(value)
                : value;
            const index = +key;
            if (index === index >>> 0 && index < 4294967295 && `${index}` === key) copy[index] = entry;
            else defineProperty(copy, key, { value: entry, writable: true, enumerable: true, configurable: true });
          }
          return copy;
        }
        const typedArray = typedArrayName === undefined ? undefined : apply(typedArrayName, input, []);
        if (typedArray !== undefined) {
          const Constructor = TYPED_ARRAYS[typedArray];
          return remember(new Constructor(clone(input.buffer), input.byteOffset, input.length));
        }
        // The tag selects the one brand to check; a tag only a Symbol.toStringTag can have changed is checked
        // against every brand (a Map subclass that calls itself something else is still a Map).
        const tag = Object.prototype.toString.call(input);
        const spoofable = tag === '[object Object]' ? Symbol.toStringTag in input : true;
        const is = (wanted, brand) => (tag === wanted || spoofable) && brands(brand, input);
        if (is('[object ArrayBuffer]', arrayBufferByteLength)) {
          const copy = remember(new OriginalArrayBuffer(apply(arrayBufferByteLength, input, [])));
          new Uint8Array(copy).set(new Uint8Array(input));
          return copy;
        }
        if (is('[object DataView]', dataViewByteLength)) {
          return remember(new DataView(clone(input.buffer), input.byteOffset, input.byteLength));
        }
        if (is('[object Date]', Date.prototype.getTime)) {
          return remember(new OriginalDate(apply(Date.prototype.getTime, input, [])));
        }
        if (is('[object RegExp]', regExpSource)) {
          return remember(new RegExp(apply(regExpSource, input, []), apply(regExpFlags, input, [])));
        }
        /** @type {[string, Function][]} */
        const boxes = [
          ['[object Boolean]', Boolean.prototype.valueOf],
          ['[object Number]', Number.prototype.valueOf],
          ['[object String]', String.prototype.valueOf],
          ['[object BigInt]', BigInt.prototype.valueOf],
        ];
        for (const [wanted, valueOf] of boxes) {
          if (is(wanted, valueOf)) return remember(Object(apply(valueOf, input, [])));
        }
        if (is('[object Map]', mapSize)) {
          const copy = remember(new Map());
          for (const [key, entry] of apply(Map.prototype.entries, input, [])) copy.set(clone(key), clone(entry));
          return copy;
        }
        if (is('[object Set]', setSize)) {
          const copy = remember(new Set());
          for (const entry of apply(Set.prototype.values, input, [])) copy.add(clone(entry));
          return copy;
        }
        if (tag === '[object Error]' || (spoofable && input instanceof Error)) {
          const name = input.name;
          const Constructor = typeof name === 'string' && Object.hasOwn(ERRORS, name) ? ERRORS[name] : Error;
          const copy = remember(new Constructor());
          const message = getOwnPropertyDescriptor(input, 'message');
          if (message !== undefined)
            defineProperty(copy, 'message', { value: String(input.message), writable: true, configurable: true });
          defineProperty(copy, 'stack', { value: String(input.stack), writable: true, configurable: true });
          return copy;
        }
        if (tag !== '[object Object]' && tag !== '[object Arguments]') throw uncloneable(input);
        const copy = remember({});
        for (const key of Object.keys(input)) {
          const entry = clone(input[key]);
          // Defined, not assigned: '__proto__' or 'toString' must become own data properties.
          defineProperty(copy, key, { value: entry, writable: true, enumerable: true, configurable: true });
        }
        return copy;
      };
      return clone(value);
    },
  };
  harden(structuredClone);
  harden(DataCloneError);

  // Every object reachable from a compartment's global, named by its path, for `refuse` and `explain`.
  const walk = (root, rootPath) => {
    const queue = [[root, rootPath]];
    for (let next = 0; next < queue.length; next++) {
      const [object, path] = queue[next];
      if (builtIns.has(object)) continue;
      builtIns.set(object, path);
      for (const key of Reflect.ownKeys(object)) {
        const descriptor = getOwnPropertyDescriptor(object, key);
        const child = descriptor.value;
        if ((typeof child === 'object' && child !== null) || typeof child === 'function') {
          queue.push([
            child,
            typeof key === 'string' ? `${path === 'globalThis' ? '' : `${path}.`}${key}` : `${path}[${String(key)}]`,
          ]);
        }
      }
    }
  };
  const globals = harden({
    Date: OriginalDate,
    Intl: SafeIntl,
    Math: SafeMath,
    Float32Array,
    Float64Array,
    WeakRef: OriginalWeakRef,
    FinalizationRegistry,
    structuredClone,
  });
  walk(new Compartment({ __options__: true, globals }).globalThis, 'globalThis');
  walk((async () => {}).constructor, 'AsyncFunction');
  walk(function* () {}.constructor, 'GeneratorFunction');
  walk(async function* () {}.constructor, 'AsyncGeneratorFunction');

  // V8's messages for writes to a frozen object, completed with the hint (an object of the tool's own that it froze
  // fails the same way; the hint then does not apply, and says what it is about).
  const FROZEN_WRITE =
    /^(Cannot add property .+, object is not extensible|Cannot assign to read only property .+|Cannot delete property .+|Cannot define property .+, object is not extensible|Cannot redefine property: .+|#<.+> is not extensible)$/;
  // Globals Node has and toolhost leaves out: the error from using one says why.
  const ABSENT = {
    SharedArrayBuffer: 'shared memory needs threads, which a tool does not have',
    Atomics: 'shared memory needs threads, which a tool does not have',
    WebAssembly: 'compiling code at run time is not available in toolhost',
    require: 'modules cannot be loaded in toolhost; write the code into the tool',
    setImmediate: 'it is a Node API; use setTimeout(callback, 0)',
    process: 'a tool has no process; its input, ctx and env are what it is given',
    Buffer: 'it is a Node API; use Uint8Array and DataView',
  };
  const explain = (name, message) => {
    if (name === 'TypeError' && FROZEN_WRITE.test(message)) return `${message} (if that is a built-in: ${HINT})`;
    // SES's compartments read an undeclared name as undefined, so an absent global fails when it is used.
    const missing = /^(\w+) is not (defined|a constructor|a function)$/.exec(message);
    if (missing !== null && Object.hasOwn(ABSENT, missing[1])) return `${message} in toolhost: ${ABSENT[missing[1]]}`;
    return message;
  };

  // The globals with the web APIs (isolate/web.js) and the prelude's timers added, named for `refuse` like the rest.
  const globalsWith = (extra) => {
    const all = harden({ ...globals, ...extra });
    walk(new Compartment({ __options__: true, globals: all }).globalThis, 'globalThis');
    return all;
  };

  delete globalThis.__toolhost_memory_mb;
  delete globalThis.__toolhost_count_stringify;
  // `parse` is the original JSON.parse, for the prelude's own parsing of what the host sends (already bounded there).
  globalThis.__toolhost_realm = harden({ globals, globalsWith, explain, parse: originalParse });
})();
