// Evaluated once per isolate after isolate/realm.js and before the runtime prelude (plain JavaScript: it runs inside
// the isolate, not in Node). The web APIs tool code expects (docs/sandbox.md, "Web APIs"): URL, URLSearchParams,
// TextEncoder, TextDecoder, atob, btoa, Headers, AbortController, AbortSignal, DOMException, crypto, Request,
// Response and fetch. Each is pure JavaScript over the frozen intrinsics, shared by every run of the tenant and
// hardened, and holds its state in private fields, so a run can neither change them nor reach another run's objects.
// Three things need the host, and reach it as strings and numbers only:
// - crypto's random bytes, digests and HMACs: a synchronous host callback (`__toolhost_crypto`, captured here and
//   deleted from the global) computes them with node:crypto from bytes passed as latin1 strings;
// - timers (AbortSignal.timeout) and fetch: through the prelude, which owns the run's channel and hands its hooks
//   over once (`connect`) before any tool code runs.
(function () {
  'use strict';
  const hostCrypto = globalThis.__toolhost_crypto;
  delete globalThis.__toolhost_crypto;
  const caps = JSON.parse(globalThis.__toolhost_caps);

  const { apply } = Reflect;
  const { defineProperty } = Object;
  const fromCharCode = String.fromCharCode;
  const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
  const typedArrayTag = Object.getOwnPropertyDescriptor(typedArrayPrototype, Symbol.toStringTag).get;
  const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const isArrayBuffer = (value) => {
    try {
      apply(arrayBufferByteLength, value, []);
      return true;
    } catch {
      return false;
    }
  };
  const isView = ArrayBuffer.isView;
  // ES2024 string methods, which the isolate has and the type-check's ES2023 library does not describe.
  /** @type {any} */
  const stringPrototype = String.prototype;
  const toWellFormed = (string) => apply(stringPrototype.toWellFormed, string, []);
  const isWellFormed = (string) => apply(stringPrototype.isWellFormed, string, []);

  /** Hooks the prelude connects: the current run's timers and its fetch channel. */
  let hooks = null;

  // ---------------------------------------------------------------------------------------------------------------
  // DOMException and the small event machinery AbortSignal needs.

  const EXCEPTION_CODES = {
    IndexSizeError: 1,
    HierarchyRequestError: 3,
    WrongDocumentError: 4,
    InvalidCharacterError: 5,
    NoModificationAllowedError: 7,
    NotFoundError: 8,
    NotSupportedError: 9,
    InvalidStateError: 11,
    SyntaxError: 12,
    InvalidModificationError: 13,
    NamespaceError: 14,
    InvalidAccessError: 15,
    TypeMismatchError: 17,
    SecurityError: 18,
    NetworkError: 19,
    AbortError: 20,
    URLMismatchError: 21,
    QuotaExceededError: 22,
    TimeoutError: 23,
    InvalidNodeTypeError: 24,
    DataCloneError: 25,
  };
  // The Error compartments see (SES's %SharedError%, the prototype of every NativeError), not this script's own,
  // which keeps V8's stack powers: DOMException's prototype chain is reachable from tool code.
  const SharedError = Object.getPrototypeOf(TypeError);
  class DOMException extends SharedError {
    #name;
    constructor(message = '', name = 'Error') {
      super(`${message}`);
      this.#name = `${name}`;
    }
    get name() {
      return this.#name;
    }
    get code() {
      return Object.hasOwn(EXCEPTION_CODES, this.#name) ? EXCEPTION_CODES[this.#name] : 0;
    }
  }
  defineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException' });

  class Event {
    #type;
    #target = null;
    #defaultPrevented = false;
    constructor(type) {
      if (arguments.length === 0) throw new TypeError('Event: the type argument is required');
      this.#type = `${type}`;
    }
    get type() {
      return this.#type;
    }
    get target() {
      return this.#target;
    }
    get currentTarget() {
      return this.#target;
    }
    get defaultPrevented() {
      return this.#defaultPrevented;
    }
    preventDefault() {
      this.#defaultPrevented = true;
    }
    stopPropagation() {}
    stopImmediatePropagation() {}
    static setTarget(event, target) {
      if (#type in event && event.#target === null) event.#target = target;
    }
  }
  const setEventTarget = Event.setTarget;
  delete Event.setTarget;
  defineProperty(Event.prototype, Symbol.toStringTag, { value: 'Event' });

  // A listener that throws does not stop the others, as on the web; its error surfaces as an unhandled rejection,
  // which the run's logs show.
  const report = (error) => {
    Promise.reject(error);
  };

  class EventTarget {
    #listeners = new Map();
    addEventListener(type, listener, options) {
      if (listener === null || listener === undefined) return;
      const once = options !== null && typeof options === 'object' && Boolean(options.once);
      const given = options !== null && typeof options === 'object' ? options.signal : undefined;
      const signal = given === null ? undefined : given;
      if (signal !== undefined && signal.aborted) return;
      const key = `${type}`;
      let list = this.#listeners.get(key);
      if (list === undefined) {
        list = [];
        this.#listeners.set(key, list);
      }
      if (list.some((entry) => entry.listener === listener)) return;
      list.push({ listener, once });
      if (signal !== undefined) signal.addEventListener('abort', () => this.removeEventListener(key, listener));
    }
    removeEventListener(type, listener) {
      const list = this.#listeners.get(`${type}`);
      if (list === undefined) return;
      const at = list.findIndex((entry) => entry.listener === listener);
      if (at !== -1) list.splice(at, 1);
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError('EventTarget.dispatchEvent: the argument is not an Event');
      setEventTarget(event, this);
      const list = this.#listeners.get(event.type);
      if (list !== undefined) {
        for (const entry of [...list]) {
          if (entry.once) this.removeEventListener(event.type, entry.listener);
          try {
            if (typeof entry.listener === 'function') apply(entry.listener, this, [event]);
            else if (typeof entry.listener.handleEvent === 'function') entry.listener.handleEvent(event);
          } catch (error) {
            report(error);
          }
        }
      }
      return !event.defaultPrevented;
    }
  }
  defineProperty(EventTarget.prototype, Symbol.toStringTag, { value: 'EventTarget' });

  const abortError = () => new DOMException('This operation was aborted', 'AbortError');

  const CREATE = Symbol('create');
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    #onabort = null;
    /** For fetch: the time the code asked for through AbortSignal.timeout, passed to the host as timeoutMs. */
    #timeoutMs = undefined;
    constructor(key) {
      if (key !== CREATE) throw new TypeError('Illegal constructor');
      super();
    }
    get aborted() {
      return this.#aborted;
    }
    get reason() {
      return this.#reason;
    }
    get onabort() {
      return this.#onabort;
    }
    set onabort(handler) {
      if (this.#onabort !== null) this.removeEventListener('abort', this.#onabort);
      this.#onabort = typeof handler === 'function' ? handler : null;
      if (this.#onabort !== null) this.addEventListener('abort', this.#onabort);
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    static abort(reason) {
      const signal = new AbortSignal(CREATE);
      signal.#aborted = true;
      signal.#reason = reason === undefined ? abortError() : reason;
      return signal;
    }
    static timeout(milliseconds) {
      const ms = Number(milliseconds);
      if (!Number.isFinite(ms) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) {
        throw new TypeError('AbortSignal.timeout: the delay must be a finite number of milliseconds, 0 or more');
      }
      const signal = new AbortSignal(CREATE);
      signal.#timeoutMs = Math.trunc(ms);
      if (hooks === null) throw new TypeError('AbortSignal.timeout: no run is in progress');
      // Like Node's, the timer does not keep the run open: a run with nothing else to wait for ends.
      hooks.setTimer(
        () => fireAbort(signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
        ms,
        false,
      );
      return signal;
    }
    static any(signals) {
      const signal = new AbortSignal(CREATE);
      const list = [...signals];
      for (const source of list) {
        if (!(source instanceof AbortSignal)) throw new TypeError('AbortSignal.any: every item must be an AbortSignal');
        if (source.aborted) {
          signal.#aborted = true;
          signal.#reason = source.reason;
          return signal;
        }
      }
      for (const source of list) {
        if (source.#timeoutMs !== undefined) {
          signal.#timeoutMs =
            signal.#timeoutMs === undefined ? source.#timeoutMs : Math.min(signal.#timeoutMs, source.#timeoutMs);
        }
        source.addEventListener('abort', () => fireAbort(signal, source.reason), { once: true });
      }
      return signal;
    }
    static fire(signal, reason) {
      if (!(#aborted in signal) || signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason === undefined ? abortError() : reason;
      // The prototype's, not one the code may have defined on its own signal.
      apply(EventTarget.prototype.dispatchEvent, signal, [new Event('abort')]);
    }
    static timeoutOf(signal) {
      return signal.#timeoutMs;
    }
  }
  const fireAbort = AbortSignal.fire;
  const timeoutOf = AbortSignal.timeoutOf;
  delete AbortSignal.fire;
  delete AbortSignal.timeoutOf;
  defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: 'AbortSignal' });

  class AbortController {
    #signal = new AbortSignal(CREATE);
    get signal() {
      return this.#signal;
    }
    abort(reason) {
      fireAbort(this.#signal, reason);
    }
  }
  defineProperty(AbortController.prototype, Symbol.toStringTag, { value: 'AbortController' });

  // ---------------------------------------------------------------------------------------------------------------
  // Bytes: UTF-8, latin1 strings (how bytes cross to the host), base64.

  /** The bytes a BufferSource views, as a Uint8Array over the same memory. */
  function bytesOf(source, label) {
    if (isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    if (isArrayBuffer(source)) return new Uint8Array(source);
    throw new TypeError(`${label}: the argument must be an ArrayBuffer or an ArrayBuffer view`);
  }

  /** Bytes as a string of one char per byte: how bytes cross the boundary (one byte each in V8 and on the copy). */
  function latin1(bytes) {
    const parts = [];
    for (let at = 0; at < bytes.length; at += 8192) {
      parts.push(apply(fromCharCode, null, bytes.subarray(at, at + 8192)));
    }
    return parts.join('');
  }

  function fromLatin1(string) {
    const bytes = new Uint8Array(string.length);
    for (let i = 0; i < string.length; i++) bytes[i] = string.charCodeAt(i);
    return bytes;
  }

  /** UTF-16 code units as a string, in chunks (fromCharCode takes its units as arguments). */
  function unitsToString(units, length) {
    const parts = [];
    for (let at = 0; at < length; at += 8192) {
      parts.push(apply(fromCharCode, null, units.subarray(at, Math.min(at + 8192, length))));
    }
    return parts.join('');
  }

  function utf8Length(string) {
    let length = 0;
    for (let i = 0; i < string.length; i++) {
      const unit = string.charCodeAt(i);
      if (unit < 0x80) length += 1;
      else if (unit < 0x800) length += 2;
      else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < string.length) {
        const next = string.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          length += 4;
          i++;
        } else length += 3;
      } else length += 3;
    }
    return length;
  }

  /**
   * Writes the UTF-8 of `string` (lone surrogates as U+FFFD) into `target`, stopping before a character that does
   * not fit; answers [code units read, bytes written].
   */
  function utf8Write(string, target) {
    let read = 0;
    let written = 0;
    const room = target.length;
    while (read < string.length) {
      let point = string.charCodeAt(read);
      let units = 1;
      if (point >= 0xd800 && point <= 0xdfff) {
        const next = read + 1 < string.length ? string.charCodeAt(read + 1) : 0;
        if (point <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          point = 0x10000 + ((point - 0xd800) << 10) + (next - 0xdc00);
          units = 2;
        } else point = 0xfffd;
      }
      if (point < 0x80) {
        if (written + 1 > room) break;
        target[written++] = point;
      } else if (point < 0x800) {
        if (written + 2 > room) break;
        target[written++] = 0xc0 | (point >> 6);
        target[written++] = 0x80 | (point & 0x3f);
      } else if (point < 0x10000) {
        if (written + 3 > room) break;
        target[written++] = 0xe0 | (point >> 12);
        target[written++] = 0x80 | ((point >> 6) & 0x3f);
        target[written++] = 0x80 | (point & 0x3f);
      } else {
        if (written + 4 > room) break;
        target[written++] = 0xf0 | (point >> 18);
        target[written++] = 0x80 | ((point >> 12) & 0x3f);
        target[written++] = 0x80 | ((point >> 6) & 0x3f);
        target[written++] = 0x80 | (point & 0x3f);
      }
      read += units;
    }
    return [read, written];
  }

  function utf8Encode(string) {
    const bytes = new Uint8Array(utf8Length(string));
    utf8Write(string, bytes);
    return bytes;
  }

  /**
   * The WHATWG UTF-8 decoder over `bytes` from `start`: answers [code units, their count, where an incomplete
   * sequence at the end begins (bytes.length if none)]. `fatal` throws on the first error instead of writing U+FFFD.
   */
  function utf8Decode(bytes, start, fatal, flush) {
    const units = new Uint16Array(bytes.length - start);
    let count = 0;
    let needed = 0;
    let seen = 0;
    let point = 0;
    let lower = 0x80;
    let upper = 0xbf;
    let sequenceStart = start;
    const bad = () => {
      if (fatal) throw new TypeError('The encoded data was not valid for encoding utf-8');
      units[count++] = 0xfffd;
    };
    for (let i = start; i < bytes.length; i++) {
      const byte = bytes[i];
      if (needed === 0) {
        sequenceStart = i;
        if (byte < 0x80) units[count++] = byte;
        else if (byte >= 0xc2 && byte <= 0xdf) {
          needed = 1;
          point = byte & 0x1f;
        } else if (byte >= 0xe0 && byte <= 0xef) {
          if (byte === 0xe0) lower = 0xa0;
          if (byte === 0xed) upper = 0x9f;
          needed = 2;
          point = byte & 0xf;
        } else if (byte >= 0xf0 && byte <= 0xf4) {
          if (byte === 0xf0) lower = 0x90;
          if (byte === 0xf4) upper = 0x8f;
          needed = 3;
          point = byte & 0x7;
        } else bad();
        continue;
      }
      if (byte < lower || byte > upper) {
        needed = 0;
        seen = 0;
        point = 0;
        lower = 0x80;
        upper = 0xbf;
        bad();
        i--;
        continue;
      }
      lower = 0x80;
      upper = 0xbf;
      point = (point << 6) | (byte & 0x3f);
      seen++;
      if (seen !== needed) continue;
      if (point > 0xffff) {
        point -= 0x10000;
        units[count++] = 0xd800 + (point >> 10);
        units[count++] = 0xdc00 + (point & 0x3ff);
      } else units[count++] = point;
      needed = 0;
      seen = 0;
      point = 0;
    }
    if (needed !== 0) {
      if (!flush) return [units, count, sequenceStart];
      bad();
    }
    return [units, count, bytes.length];
  }

  function utf8DecodeAll(bytes) {
    const [units, count] = utf8Decode(bytes, 0, false, true);
    return unitsToString(units, count);
  }

  const ASCII_ONLY = /^[\0-\x7f]*$/;
  /** Text of a body held as a latin1 string: ASCII is itself, the rest goes through the decoder. */
  function utf8DecodeLatin1(string) {
    let text;
    if (ASCII_ONLY.test(string)) text = string;
    else {
      try {
        // Both built-ins are native: the fast way from a UTF-8 byte string to text; malformed UTF-8 throws.
        text = decodeURIComponent(escape(string));
      } catch {
        text = utf8DecodeAll(fromLatin1(string));
      }
    }
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // TextEncoder and TextDecoder.

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input = '') {
      return utf8Encode(`${input}`);
    }
    encodeInto(source, destination) {
      if (!isView(destination) || apply(typedArrayTag, destination, []) !== 'Uint8Array') {
        throw new TypeError('TextEncoder.encodeInto: the destination must be a Uint8Array');
      }
      const [read, written] = utf8Write(`${source}`, destination);
      return { read, written };
    }
  }
  defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: 'TextEncoder' });

  const WINDOWS_1252 =
    '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
    '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
  /** @type {Map<string, string>} */
  const ENCODINGS = new Map();
  for (const label of ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8']) {
    ENCODINGS.set(label, 'utf-8');
  }
  for (const label of ['csunicode', 'iso-10646-ucs-2', 'ucs-2', 'unicode', 'unicodefeff', 'utf-16', 'utf-16le']) {
    ENCODINGS.set(label, 'utf-16le');
  }
  for (const label of [
    'ansi_x3.4-1968',
    'ascii',
    'cp1252',
    'cp819',
    'csisolatin1',
    'ibm819',
    'iso-8859-1',
    'iso-ir-100',
    'iso8859-1',
    'iso88591',
    'iso_8859-1',
    'iso_8859-1:1987',
    'l1',
    'latin1',
    'us-ascii',
    'windows-1252',
    'x-cp1252',
  ]) {
    ENCODINGS.set(label, 'windows-1252');
  }

  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    #pending = null;
    #started = false;
    constructor(label = 'utf-8', options = undefined) {
      const name = ENCODINGS.get(`${label}`.trim().toLowerCase());
      if (name === undefined) {
        throw new RangeError(
          `TextDecoder: the encoding "${label}" is not supported in toolhost (utf-8, utf-16le and windows-1252 are)`,
        );
      }
      this.#encoding = name;
      this.#fatal = options !== null && typeof options === 'object' && Boolean(options.fatal);
      this.#ignoreBOM = options !== null && typeof options === 'object' && Boolean(options.ignoreBOM);
    }
    get encoding() {
      return this.#encoding;
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input = undefined, options = undefined) {
      const stream = options !== null && typeof options === 'object' && Boolean(options.stream);
      let bytes = input === undefined ? new Uint8Array(0) : bytesOf(input, 'TextDecoder.decode');
      if (this.#pending !== null) {
        const joined = new Uint8Array(this.#pending.length + bytes.length);
        joined.set(this.#pending);
        joined.set(bytes, this.#pending.length);
        bytes = joined;
        this.#pending = null;
      }
      let text;
      if (this.#encoding === 'utf-8') {
        const [units, count, rest] = utf8Decode(bytes, 0, this.#fatal, !stream);
        if (rest < bytes.length) this.#pending = bytes.slice(rest);
        text = unitsToString(units, count);
      } else if (this.#encoding === 'utf-16le') {
        const even = bytes.length - (bytes.length % 2);
        if (stream && even < bytes.length) this.#pending = bytes.slice(even);
        const units = new Uint16Array(even / 2 + 1);
        let count = 0;
        for (let i = 0; i < even; i += 2) units[count++] = bytes[i] | (bytes[i + 1] << 8);
        if (!stream && even < bytes.length) {
          if (this.#fatal) throw new TypeError('The encoded data was not valid for encoding utf-16le');
          units[count++] = 0xfffd;
        }
        text = unitsToString(units, count);
        // Lone surrogates are errors in UTF-16 too.
        if (!isWellFormed(text)) {
          if (this.#fatal) throw new TypeError('The encoded data was not valid for encoding utf-16le');
          text = toWellFormed(text);
        }
      } else {
        const units = new Uint16Array(bytes.length);
        for (let i = 0; i < bytes.length; i++) {
          const byte = bytes[i];
          units[i] = byte >= 0x80 && byte < 0xa0 ? WINDOWS_1252.charCodeAt(byte - 0x80) : byte;
        }
        text = unitsToString(units, bytes.length);
      }
      if (!this.#started && text.length > 0) {
        this.#started = true;
        if (!this.#ignoreBOM && this.#encoding !== 'windows-1252' && text.charCodeAt(0) === 0xfeff) {
          text = text.slice(1);
        }
      }
      if (!stream) this.#started = false;
      return text;
    }
  }
  defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: 'TextDecoder' });

  // ---------------------------------------------------------------------------------------------------------------
  // atob and btoa (the forgiving-base64 algorithms of the HTML standard).

  const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const BASE64_VALUES = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) BASE64_VALUES[BASE64.charCodeAt(i)] = i;

  const { btoa, atob } = {
    btoa(data) {
      if (arguments.length === 0) throw new TypeError('btoa: 1 argument required, but only 0 present');
      const string = `${data}`;
      const out = new Uint8Array(Math.ceil(string.length / 3) * 4);
      let o = 0;
      let i = 0;
      const byteAt = (at) => {
        const unit = string.charCodeAt(at);
        if (unit > 0xff) {
          throw new DOMException('Invalid character: btoa encodes characters up to U+00FF', 'InvalidCharacterError');
        }
        return unit;
      };
      for (; i + 2 < string.length; i += 3) {
        const n = (byteAt(i) << 16) | (byteAt(i + 1) << 8) | byteAt(i + 2);
        out[o++] = BASE64.charCodeAt(n >> 18);
        out[o++] = BASE64.charCodeAt((n >> 12) & 63);
        out[o++] = BASE64.charCodeAt((n >> 6) & 63);
        out[o++] = BASE64.charCodeAt(n & 63);
      }
      const rest = string.length - i;
      if (rest > 0) {
        const n = (byteAt(i) << 16) | (rest === 2 ? byteAt(i + 1) << 8 : 0);
        out[o++] = BASE64.charCodeAt(n >> 18);
        out[o++] = BASE64.charCodeAt((n >> 12) & 63);
        out[o++] = rest === 2 ? BASE64.charCodeAt((n >> 6) & 63) : 61;
        out[o++] = 61;
      }
      return latin1(out);
    },
    atob(data) {
      if (arguments.length === 0) throw new TypeError('atob: 1 argument required, but only 0 present');
      let string = `${data}`;
      if (/[\t\n\f\r ]/.test(string)) string = string.replace(/[\t\n\f\r ]+/g, '');
      if (string.length % 4 === 0) {
        if (string.endsWith('==')) string = string.slice(0, -2);
        else if (string.endsWith('=')) string = string.slice(0, -1);
      }
      const invalid = () =>
        new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
      if (string.length % 4 === 1) throw invalid();
      const out = new Uint8Array(Math.floor((string.length * 3) / 4));
      let buffer = 0;
      let bits = 0;
      let o = 0;
      for (let i = 0; i < string.length; i++) {
        const unit = string.charCodeAt(i);
        const value = unit < 128 ? BASE64_VALUES[unit] : -1;
        if (value < 0) throw invalid();
        buffer = ((buffer << 6) | value) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          out[o++] = (buffer >> bits) & 0xff;
        }
      }
      return latin1(out.subarray(0, o));
    },
  };

  // ---------------------------------------------------------------------------------------------------------------
  // URL and URLSearchParams: the WHATWG URL Standard's parser, serializer and API. Host names that are not ASCII are
  // lower-cased, NFC-normalized and punycoded label by label; the full UTS #46 mapping table is left out.

  const SPECIAL = new Map([
    ['ftp', 21],
    ['file', null],
    ['http', 80],
    ['https', 443],
    ['ws', 80],
    ['wss', 443],
  ]);
  const isSpecialScheme = (scheme) => SPECIAL.has(scheme);

  const inC0 = (c) => c < 0x20 || c > 0x7e;
  const inFragment = (c) => inC0(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
  const inQuery = (c) => inC0(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
  const inSpecialQuery = (c) => inQuery(c) || c === 0x27;
  const inPath = (c) => inQuery(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
  const inUserinfo = (c) =>
    inPath(c) ||
    c === 0x2f ||
    c === 0x3a ||
    c === 0x3b ||
    c === 0x3d ||
    c === 0x40 ||
    (c >= 0x5b && c <= 0x5e) ||
    c === 0x7c;

  const HEX = '0123456789ABCDEF';
  const percentByte = (byte) => `%${HEX[byte >> 4]}${HEX[byte & 15]}`;

  /** One code point (as a string) percent-encoded as UTF-8 when `inSet` says so. */
  function encodePoint(point, inSet) {
    const c = point.codePointAt(0);
    if (!inSet(c)) return point;
    let out = '';
    for (const byte of utf8Encode(point)) out += percentByte(byte);
    return out;
  }

  function encodeString(string, inSet) {
    let out = '';
    for (const point of string) out += encodePoint(point, inSet);
    return out;
  }

  const isHexDigit = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

  /** Percent-decoding of bytes. */
  function percentDecode(bytes) {
    const out = new Uint8Array(bytes.length);
    let o = 0;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      if (byte === 0x25 && i + 2 < bytes.length && isHexDigit(bytes[i + 1]) && isHexDigit(bytes[i + 2])) {
        out[o++] = parseInt(fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
        i += 2;
      } else out[o++] = byte;
    }
    return out.subarray(0, o);
  }

  // Punycode (RFC 3492), encoding only: what ToASCII needs.
  function punycode(input) {
    const points = [...input].map((p) => p.codePointAt(0));
    let n = 128;
    let delta = 0;
    let bias = 72;
    let output = points
      .filter((p) => p < 128)
      .map((p) => fromCharCode(p))
      .join('');
    const basic = output.length;
    let handled = basic;
    if (basic > 0) output += '-';
    const digit = (d) => fromCharCode(d + 22 + 75 * (d < 26 ? 1 : 0));
    const adapt = (d, count, first) => {
      let k = 0;
      d = first ? Math.floor(d / 700) : d >> 1;
      d += Math.floor(d / count);
      for (; d > 455; k += 36) d = Math.floor(d / 35);
      return Math.floor(k + (36 * d) / (d + 38));
    };
    while (handled < points.length) {
      const m = Math.min(...points.filter((p) => p >= n));
      delta += (m - n) * (handled + 1);
      n = m;
      for (const p of points) {
        if (p < n) delta++;
        if (p === n) {
          let q = delta;
          for (let k = 36; ; k += 36) {
            const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
            if (q < t) break;
            output += digit(t + ((q - t) % (36 - t)));
            q = Math.floor((q - t) / (36 - t));
          }
          output += digit(q);
          bias = adapt(delta, handled + 1, handled === basic);
          delta = 0;
          handled++;
        }
      }
      delta++;
      n++;
    }
    return output;
  }

  const FAILURE = Symbol('failure');

  function domainToASCII(domain) {
    if (/^[\0-\x7f]*$/.test(domain)) return domain.toLowerCase();
    const mapped = domain
      .toLowerCase()
      .normalize('NFC')
      .replace(/[\u3002\uff0e\uff61]/g, '.');
    return mapped
      .split('.')
      .map((label) => (/^[\0-\x7f]*$/.test(label) ? label : `xn--${punycode(label)}`))
      .join('.');
  }

  function parseIPv4Number(input) {
    if (input === '') return FAILURE;
    let radix = 10;
    let text = input;
    if (text.length >= 2 && (text.startsWith('0x') || text.startsWith('0X'))) {
      text = text.slice(2);
      radix = 16;
    } else if (text.length >= 2 && text.startsWith('0')) {
      text = text.slice(1);
      radix = 8;
    }
    if (text === '') return 0;
    const valid = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
    if (!valid.test(text)) return FAILURE;
    return parseInt(text, radix);
  }

  function endsInANumber(input) {
    const parts = input.split('.');
    if (parts[parts.length - 1] === '') {
      if (parts.length === 1) return false;
      parts.pop();
    }
    const last = parts[parts.length - 1];
    if (last !== '' && /^[0-9]+$/.test(last)) return true;
    return parseIPv4Number(last) !== FAILURE;
  }

  function parseIPv4(input) {
    const parts = input.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    if (parts.length > 4) return FAILURE;
    const numbers = [];
    for (const part of parts) {
      const n = parseIPv4Number(part);
      if (n === FAILURE) return FAILURE;
      numbers.push(n);
    }
    for (let i = 0; i < numbers.length - 1; i++) if (numbers[i] > 255) return FAILURE;
    const last = numbers[numbers.length - 1];
    if (last >= 256 ** (5 - numbers.length)) return FAILURE;
    let ipv4 = last;
    for (let i = 0; i < numbers.length - 1; i++) ipv4 += numbers[i] * 256 ** (3 - i);
    return ipv4;
  }

  const serializeIPv4 = (address) =>
    [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.');

  function parseIPv6(input) {
    const address = [0, 0, 0, 0, 0, 0, 0, 0];
    let pieceIndex = 0;
    let compress = null;
    let pointer = 0;
    const c = (at) => (at < input.length ? input.charCodeAt(at) : NaN);
    if (c(pointer) === 0x3a) {
      if (c(pointer + 1) !== 0x3a) return FAILURE;
      pointer += 2;
      pieceIndex++;
      compress = pieceIndex;
    }
    while (pointer < input.length) {
      if (pieceIndex === 8) return FAILURE;
      if (c(pointer) === 0x3a) {
        if (compress !== null) return FAILURE;
        pointer++;
        pieceIndex++;
        compress = pieceIndex;
        continue;
      }
      let value = 0;
      let length = 0;
      while (length < 4 && isHexDigit(c(pointer))) {
        value = value * 16 + parseInt(input[pointer], 16);
        pointer++;
        length++;
      }
      if (c(pointer) === 0x2e) {
        if (length === 0) return FAILURE;
        pointer -= length;
        if (pieceIndex > 6) return FAILURE;
        let numbersSeen = 0;
        while (pointer < input.length) {
          let ipv4Piece = null;
          if (numbersSeen > 0) {
            if (c(pointer) === 0x2e && numbersSeen < 4) pointer++;
            else return FAILURE;
          }
          if (!(c(pointer) >= 0x30 && c(pointer) <= 0x39)) return FAILURE;
          while (c(pointer) >= 0x30 && c(pointer) <= 0x39) {
            const number = c(pointer) - 0x30;
            if (ipv4Piece === null) ipv4Piece = number;
            else if (ipv4Piece === 0) return FAILURE;
            else ipv4Piece = ipv4Piece * 10 + number;
            if (ipv4Piece > 255) return FAILURE;
            pointer++;
          }
          address[pieceIndex] = address[pieceIndex] * 0x100 + ipv4Piece;
          numbersSeen++;
          if (numbersSeen === 2 || numbersSeen === 4) pieceIndex++;
        }
        if (numbersSeen !== 4) return FAILURE;
        break;
      } else if (c(pointer) === 0x3a) {
        pointer++;
        if (pointer >= input.length) return FAILURE;
      } else if (pointer < input.length) return FAILURE;
      address[pieceIndex] = value;
      pieceIndex++;
    }
    if (compress !== null) {
      let swaps = pieceIndex - compress;
      pieceIndex = 7;
      while (pieceIndex !== 0 && swaps > 0) {
        const other = compress + swaps - 1;
        const held = address[pieceIndex];
        address[pieceIndex] = address[other];
        address[other] = held;
        pieceIndex--;
        swaps--;
      }
    } else if (pieceIndex !== 8) return FAILURE;
    return address;
  }

  function serializeIPv6(address) {
    // The first longest run of two or more zero pieces is compressed.
    let bestStart = -1;
    let bestLength = 1;
    for (let i = 0; i < 8;) {
      if (address[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && address[j] === 0) j++;
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j;
    }
    let out = '';
    let ignore0 = false;
    for (let i = 0; i < 8; i++) {
      if (ignore0 && address[i] === 0) continue;
      ignore0 = false;
      if (bestStart === i) {
        out += i === 0 ? '::' : ':';
        ignore0 = true;
        continue;
      }
      out += address[i].toString(16);
      if (i !== 7) out += ':';
    }
    return out;
  }

  const FORBIDDEN_HOST = /[\0\t\n\r #/:<>?@[\\\]^|]/;

  const FORBIDDEN_DOMAIN = /[\0-\x20#%/:<>?@[\\\]^|\x7f]/;

  function parseHost(input, isOpaque) {
    if (input.startsWith('[')) {
      if (!input.endsWith(']')) return FAILURE;
      const address = parseIPv6(input.slice(1, -1));
      return address === FAILURE ? FAILURE : `[${serializeIPv6(address)}]`;
    }
    if (isOpaque) {
      if (FORBIDDEN_HOST.test(input)) return FAILURE;
      return encodeString(input, inC0);
    }
    const domain = utf8DecodeAll(percentDecode(utf8Encode(input)));
    const ascii = domainToASCII(domain);
    if (ascii === '' || FORBIDDEN_DOMAIN.test(ascii)) return FAILURE;
    if (endsInANumber(ascii)) {
      const ipv4 = parseIPv4(ascii);
      return ipv4 === FAILURE ? FAILURE : serializeIPv4(ipv4);
    }
    return ascii;
  }

  const isAlpha = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  const isDigit = (c) => c >= 0x30 && c <= 0x39;
  const isWindowsDriveLetter = (s) => s.length === 2 && isAlpha(s.charCodeAt(0)) && (s[1] === ':' || s[1] === '|');
  const isNormalizedWindowsDriveLetter = (s) => s.length === 2 && isAlpha(s.charCodeAt(0)) && s[1] === ':';
  /** Whether the code points from `at` start with a Windows drive letter, followed by nothing or / \ ? #. */
  const startsWithWindowsDriveLetter = (points, at) => {
    if (points.length - at < 2) return false;
    if (!isWindowsDriveLetter(points[at] + points[at + 1])) return false;
    if (points.length - at === 2) return true;
    const third = points[at + 2];
    return third === '/' || third === '\\' || third === '?' || third === '#';
  };
  const SINGLE_DOT = new Set(['.', '%2e']);
  const DOUBLE_DOT = new Set(['..', '.%2e', '%2e.', '%2e%2e']);

  /**
   * A URL record: `path` is a list of segments, or a string for an opaque path.
   * @typedef {{ scheme: string, username: string, password: string, host: string | null, port: number | null,
   *   path: any, query: string | null, fragment: string | null }} UrlRecord
   */
  /** @returns {UrlRecord} */
  const newRecord = () => ({
    scheme: '',
    username: '',
    password: '',
    host: null,
    port: null,
    path: [],
    query: null,
    fragment: null,
  });
  const hasOpaquePath = (url) => typeof url.path === 'string';
  const includesCredentials = (url) => url.username !== '' || url.password !== '';
  const cannotHaveCredentialsOrPort = (url) => url.host === null || url.host === '' || url.scheme === 'file';

  function shortenPath(url) {
    const { path } = url;
    if (url.scheme === 'file' && path.length === 1 && isNormalizedWindowsDriveLetter(path[0])) return;
    path.pop();
  }

  const S = {
    SCHEME_START: 1,
    SCHEME: 2,
    NO_SCHEME: 3,
    SPECIAL_RELATIVE_OR_AUTHORITY: 4,
    PATH_OR_AUTHORITY: 5,
    RELATIVE: 6,
    RELATIVE_SLASH: 7,
    SPECIAL_AUTHORITY_SLASHES: 8,
    SPECIAL_AUTHORITY_IGNORE_SLASHES: 9,
    AUTHORITY: 10,
    HOST: 11,
    HOSTNAME: 12,
    PORT: 13,
    FILE: 14,
    FILE_SLASH: 15,
    FILE_HOST: 16,
    PATH_START: 17,
    PATH: 18,
    OPAQUE_PATH: 19,
    QUERY: 20,
    FRAGMENT: 21,
  };

  /** The basic URL parser. Answers the record, FAILURE, or (with a state override) undefined when it stops. */
  function basicParse(rawInput, base, given, stateOverride) {
    let input = `${rawInput}`;
    let url = given;
    if (url === undefined) {
      url = newRecord();

      input = input.replace(/^[\0-\x20]+|[\0-\x20]+$/g, '');
    }
    input = input.replace(/[\t\n\r]/g, '');
    const points = [...input];
    let state = stateOverride || S.SCHEME_START;
    let buffer = '';
    let bufferPoints = 0;
    let atSignSeen = false;
    let insideBrackets = false;
    let passwordTokenSeen = false;
    const special = () => isSpecialScheme(url.scheme);
    for (let pointer = 0; pointer <= points.length; pointer++) {
      const p = points[pointer];
      const c = p === undefined ? NaN : p.codePointAt(0);
      const eof = p === undefined;
      switch (state) {
        case S.SCHEME_START:
          if (isAlpha(c)) {
            buffer += p.toLowerCase();
            state = S.SCHEME;
          } else if (!stateOverride) {
            state = S.NO_SCHEME;
            pointer--;
          } else return FAILURE;
          break;
        case S.SCHEME:
          if (isAlpha(c) || isDigit(c) || p === '+' || p === '-' || p === '.') buffer += p.toLowerCase();
          else if (p === ':') {
            if (stateOverride) {
              if (isSpecialScheme(url.scheme) !== isSpecialScheme(buffer)) return undefined;
              if ((includesCredentials(url) || url.port !== null) && buffer === 'file') return undefined;
              if (url.scheme === 'file' && url.host === '') return undefined;
            }
            url.scheme = buffer;
            if (stateOverride) {
              if (url.port === SPECIAL.get(url.scheme)) url.port = null;
              return undefined;
            }
            buffer = '';
            if (url.scheme === 'file') state = S.FILE;
            else if (special() && base !== null && base.scheme === url.scheme) state = S.SPECIAL_RELATIVE_OR_AUTHORITY;
            else if (special()) state = S.SPECIAL_AUTHORITY_SLASHES;
            else if (points[pointer + 1] === '/') {
              state = S.PATH_OR_AUTHORITY;
              pointer++;
            } else {
              url.path = '';
              state = S.OPAQUE_PATH;
            }
          } else if (!stateOverride) {
            buffer = '';
            state = S.NO_SCHEME;
            pointer = -1;
          } else return FAILURE;
          break;
        case S.NO_SCHEME:
          if (base === null || (hasOpaquePath(base) && p !== '#')) return FAILURE;
          if (hasOpaquePath(base) && p === '#') {
            url.scheme = base.scheme;
            url.path = base.path;
            url.query = base.query;
            url.fragment = '';
            state = S.FRAGMENT;
          } else if (base.scheme !== 'file') {
            state = S.RELATIVE;
            pointer--;
          } else {
            state = S.FILE;
            pointer--;
          }
          break;
        case S.SPECIAL_RELATIVE_OR_AUTHORITY:
          if (p === '/' && points[pointer + 1] === '/') {
            state = S.SPECIAL_AUTHORITY_IGNORE_SLASHES;
            pointer++;
          } else {
            state = S.RELATIVE;
            pointer--;
          }
          break;
        case S.PATH_OR_AUTHORITY:
          if (p === '/') state = S.AUTHORITY;
          else {
            state = S.PATH;
            pointer--;
          }
          break;
        case S.RELATIVE:
          url.scheme = base.scheme;
          if (p === '/') state = S.RELATIVE_SLASH;
          else if (special() && p === '\\') state = S.RELATIVE_SLASH;
          else {
            url.username = base.username;
            url.password = base.password;
            url.host = base.host;
            url.port = base.port;
            url.path = [...base.path];
            url.query = base.query;
            if (p === '?') {
              url.query = '';
              state = S.QUERY;
            } else if (p === '#') {
              url.fragment = '';
              state = S.FRAGMENT;
            } else if (!eof) {
              url.query = null;
              shortenPath(url);
              state = S.PATH;
              pointer--;
            }
          }
          break;
        case S.RELATIVE_SLASH:
          if (special() && (p === '/' || p === '\\')) state = S.SPECIAL_AUTHORITY_IGNORE_SLASHES;
          else if (p === '/') state = S.AUTHORITY;
          else {
            url.username = base.username;
            url.password = base.password;
            url.host = base.host;
            url.port = base.port;
            state = S.PATH;
            pointer--;
          }
          break;
        case S.SPECIAL_AUTHORITY_SLASHES:
          if (p === '/' && points[pointer + 1] === '/') {
            state = S.SPECIAL_AUTHORITY_IGNORE_SLASHES;
            pointer++;
          } else {
            state = S.SPECIAL_AUTHORITY_IGNORE_SLASHES;
            pointer--;
          }
          break;
        case S.SPECIAL_AUTHORITY_IGNORE_SLASHES:
          if (p !== '/' && p !== '\\') {
            state = S.AUTHORITY;
            pointer--;
          }
          break;
        case S.AUTHORITY:
          if (p === '@') {
            if (atSignSeen) {
              buffer = `%40${buffer}`;
            }
            atSignSeen = true;
            for (const point of buffer) {
              if (point === ':' && !passwordTokenSeen) {
                passwordTokenSeen = true;
                continue;
              }
              const encoded = encodePoint(point, inUserinfo);
              if (passwordTokenSeen) url.password += encoded;
              else url.username += encoded;
            }
            buffer = '';
            bufferPoints = 0;
          } else if (eof || p === '/' || p === '?' || p === '#' || (special() && p === '\\')) {
            if (atSignSeen && buffer === '') return FAILURE;
            pointer -= bufferPoints + 1;
            buffer = '';
            bufferPoints = 0;
            state = S.HOST;
          } else {
            buffer += p;
            bufferPoints++;
          }
          break;
        case S.HOST:
        case S.HOSTNAME:
          if (stateOverride && url.scheme === 'file') {
            pointer--;
            state = S.FILE_HOST;
          } else if (p === ':' && !insideBrackets) {
            if (buffer === '') return FAILURE;
            if (stateOverride === S.HOSTNAME) return undefined;
            const host = parseHost(buffer, !special());
            if (host === FAILURE) return FAILURE;
            url.host = host;
            buffer = '';
            state = S.PORT;
          } else if (eof || p === '/' || p === '?' || p === '#' || (special() && p === '\\')) {
            pointer--;
            if (special() && buffer === '') return FAILURE;
            if (stateOverride && buffer === '' && (includesCredentials(url) || url.port !== null)) return undefined;
            const host = parseHost(buffer, !special());
            if (host === FAILURE) return FAILURE;
            url.host = host;
            buffer = '';
            state = S.PATH_START;
            if (stateOverride) return undefined;
          } else {
            if (p === '[') insideBrackets = true;
            if (p === ']') insideBrackets = false;
            buffer += p;
          }
          break;
        case S.PORT:
          if (isDigit(c)) buffer += p;
          else if (eof || p === '/' || p === '?' || p === '#' || (special() && p === '\\') || stateOverride) {
            if (buffer !== '') {
              const port = parseInt(buffer, 10);
              if (port > 65535) return FAILURE;
              url.port = port === SPECIAL.get(url.scheme) ? null : port;
              buffer = '';
            }
            if (stateOverride) return undefined;
            state = S.PATH_START;
            pointer--;
          } else return FAILURE;
          break;
        case S.FILE:
          url.scheme = 'file';
          url.host = '';
          if (p === '/' || p === '\\') state = S.FILE_SLASH;
          else if (base !== null && base.scheme === 'file') {
            url.host = base.host;
            url.path = [...base.path];
            url.query = base.query;
            if (p === '?') {
              url.query = '';
              state = S.QUERY;
            } else if (p === '#') {
              url.fragment = '';
              state = S.FRAGMENT;
            } else if (!eof) {
              url.query = null;
              if (!startsWithWindowsDriveLetter(points, pointer)) shortenPath(url);
              else url.path = [];
              state = S.PATH;
              pointer--;
            }
          } else {
            state = S.PATH;
            pointer--;
          }
          break;
        case S.FILE_SLASH:
          if (p === '/' || p === '\\') state = S.FILE_HOST;
          else {
            if (base !== null && base.scheme === 'file') {
              url.host = base.host;
              if (
                !startsWithWindowsDriveLetter(points, pointer) &&
                base.path.length > 0 &&
                isNormalizedWindowsDriveLetter(base.path[0])
              ) {
                url.path.push(base.path[0]);
              }
            }
            state = S.PATH;
            pointer--;
          }
          break;
        case S.FILE_HOST:
          if (eof || p === '/' || p === '\\' || p === '?' || p === '#') {
            pointer--;
            if (!stateOverride && isWindowsDriveLetter(buffer)) state = S.PATH;
            else if (buffer === '') {
              url.host = '';
              if (stateOverride) return undefined;
              state = S.PATH_START;
            } else {
              let host = parseHost(buffer, !special());
              if (host === FAILURE) return FAILURE;
              if (host === 'localhost') host = '';
              url.host = host;
              if (stateOverride) return undefined;
              buffer = '';
              state = S.PATH_START;
            }
          } else buffer += p;
          break;
        case S.PATH_START:
          if (special()) {
            state = S.PATH;
            if (p !== '/' && p !== '\\') pointer--;
          } else if (!stateOverride && p === '?') {
            url.query = '';
            state = S.QUERY;
          } else if (!stateOverride && p === '#') {
            url.fragment = '';
            state = S.FRAGMENT;
          } else if (!eof) {
            state = S.PATH;
            if (p !== '/') pointer--;
          } else if (stateOverride && url.host === null) url.path.push('');
          break;
        case S.PATH:
          if (eof || p === '/' || (special() && p === '\\') || (!stateOverride && (p === '?' || p === '#'))) {
            const lower = buffer.toLowerCase();
            const slash = p === '/' || (special() && p === '\\');
            if (DOUBLE_DOT.has(lower)) {
              shortenPath(url);
              if (!slash) url.path.push('');
            } else if (SINGLE_DOT.has(lower) && !slash) url.path.push('');
            else if (!SINGLE_DOT.has(lower)) {
              if (url.scheme === 'file' && url.path.length === 0 && isWindowsDriveLetter(buffer)) {
                buffer = `${buffer[0]}:`;
              }
              url.path.push(buffer);
            }
            buffer = '';
            if (p === '?') {
              url.query = '';
              state = S.QUERY;
            }
            if (p === '#') {
              url.fragment = '';
              state = S.FRAGMENT;
            }
          } else buffer += encodePoint(p, inPath);
          break;
        case S.OPAQUE_PATH:
          if (p === '?') {
            url.query = '';
            state = S.QUERY;
          } else if (p === '#') {
            url.fragment = '';
            state = S.FRAGMENT;
          } else if (!eof) url.path += encodePoint(p, inC0);
          break;
        case S.QUERY:
          if ((!stateOverride && p === '#') || eof) {
            url.query += encodeString(buffer, special() ? inSpecialQuery : inQuery);
            buffer = '';
            if (p === '#') {
              url.fragment = '';
              state = S.FRAGMENT;
            }
          } else buffer += p;
          break;
        case S.FRAGMENT:
          if (!eof) url.fragment += encodePoint(p, inFragment);
          break;
        default:
          return FAILURE;
      }
    }
    return url;
  }

  function serializePath(url) {
    if (hasOpaquePath(url)) return url.path;
    let out = '';
    for (const segment of url.path) out += `/${segment}`;
    return out;
  }

  function serializeURL(url, excludeFragment) {
    let out = `${url.scheme}:`;
    if (url.host !== null) {
      out += '//';
      if (includesCredentials(url)) {
        out += url.username;
        if (url.password !== '') out += `:${url.password}`;
        out += '@';
      }
      out += url.host;
      if (url.port !== null) out += `:${url.port}`;
    } else if (!hasOpaquePath(url) && url.path.length > 1 && url.path[0] === '') out += '/.';
    out += serializePath(url);
    if (url.query !== null) out += `?${url.query}`;
    if (!excludeFragment && url.fragment !== null) out += `#${url.fragment}`;
    return out;
  }

  function originOf(url) {
    if (url.scheme === 'blob') {
      const inner = basicParse(serializePath(url), null, undefined, 0);
      if (inner !== FAILURE && (inner.scheme === 'http' || inner.scheme === 'https')) return originOf(inner);
      return 'null';
    }
    if (isSpecialScheme(url.scheme) && url.scheme !== 'file') {
      return `${url.scheme}://${url.host}${url.port === null ? '' : `:${url.port}`}`;
    }
    return 'null';
  }

  // application/x-www-form-urlencoded.
  function formParse(input) {
    const list = [];
    for (const sequence of input.split('&')) {
      if (sequence === '') continue;
      const at = sequence.indexOf('=');
      const name = at === -1 ? sequence : sequence.slice(0, at);
      const value = at === -1 ? '' : sequence.slice(at + 1);
      const decode = (s) => utf8DecodeAll(percentDecode(utf8Encode(s.replace(/\+/g, ' '))));
      list.push([decode(name), decode(value)]);
    }
    return list;
  }

  const FORM_SAFE = /^[A-Za-z0-9*\-._]$/;
  function formEncode(string) {
    let out = '';
    for (const byte of utf8Encode(string)) {
      if (byte === 0x20) out += '+';
      else if (byte < 0x80 && FORM_SAFE.test(fromCharCode(byte))) out += fromCharCode(byte);
      else out += percentByte(byte);
    }
    return out;
  }
  const formSerialize = (list) => list.map(([name, value]) => `${formEncode(name)}=${formEncode(value)}`).join('&');

  const toUSV = (value) => toWellFormed(`${value}`);

  class URLSearchParams {
    #list = [];
    /** The URL whose query this is (url.searchParams), or null. */
    #url = null;
    constructor(init = undefined) {
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        if (#list in init) {
          this.#list = init.#list.map(([name, value]) => [name, value]);
          return;
        }
        const iterator = init[Symbol.iterator];
        if (iterator !== undefined && iterator !== null) {
          if (typeof iterator !== 'function') throw new TypeError('URLSearchParams: the init is not iterable');
          for (const pair of init) {
            const entry = [...pair];
            if (entry.length !== 2) {
              throw new TypeError('URLSearchParams: each pair of the init must have exactly two items');
            }
            this.#list.push([toUSV(entry[0]), toUSV(entry[1])]);
          }
          return;
        }
        for (const key of Reflect.ownKeys(init)) {
          if (typeof key !== 'string') continue;
          const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
          if (descriptor === undefined || !descriptor.enumerable) continue;
          this.#list.push([toUSV(key), toUSV(init[key])]);
        }
        return;
      }
      let text = toUSV(init);
      if (text.startsWith('?')) text = text.slice(1);
      this.#list = formParse(text);
    }
    static attach(params, url) {
      params.#url = url;
    }
    static replace(params, query) {
      params.#list = query === null ? [] : formParse(query);
    }
    #update() {
      const url = this.#url;
      if (url === null) return;
      const serialized = formSerialize(this.#list);
      url.query = serialized === '' ? null : serialized;
      if (url.query === null) stripTrailingSpaces(url);
    }
    get size() {
      return this.#list.length;
    }
    append(name, value) {
      if (arguments.length < 2) throw new TypeError('URLSearchParams.append: 2 arguments required');
      this.#list.push([toUSV(name), toUSV(value)]);
      this.#update();
    }
    delete(name, value = undefined) {
      const n = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      this.#list = this.#list.filter(([key, val]) => !(key === n && (v === undefined || val === v)));
      this.#update();
    }
    get(name) {
      const n = toUSV(name);
      const found = this.#list.find(([key]) => key === n);
      return found === undefined ? null : found[1];
    }
    getAll(name) {
      const n = toUSV(name);
      return this.#list.filter(([key]) => key === n).map(([, value]) => value);
    }
    has(name, value = undefined) {
      const n = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      return this.#list.some(([key, val]) => key === n && (v === undefined || val === v));
    }
    set(name, value) {
      const n = toUSV(name);
      const v = toUSV(value);
      const at = this.#list.findIndex(([key]) => key === n);
      if (at === -1) this.#list.push([n, v]);
      else {
        this.#list[at][1] = v;
        this.#list = this.#list.filter(([key], index) => key !== n || index <= at);
      }
      this.#update();
    }
    sort() {
      // Stable, by code units, as the standard says (Array.prototype.sort is stable).
      this.#list.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      this.#update();
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function')
        throw new TypeError('URLSearchParams.forEach: the callback is not a function');
      for (let i = 0; i < this.#list.length; i++) {
        const [name, value] = this.#list[i];
        apply(callback, thisArg, [value, name, this]);
      }
    }
    *entries() {
      for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]];
    }
    *keys() {
      for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0];
    }
    *values() {
      for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1];
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return formSerialize(this.#list);
    }
  }
  const attachParams = URLSearchParams.attach;
  const replaceParams = URLSearchParams.replace;
  delete URLSearchParams.attach;
  delete URLSearchParams.replace;
  defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: 'URLSearchParams' });

  function stripTrailingSpaces(url) {
    if (!hasOpaquePath(url) || url.fragment !== null || url.query !== null) return;
    url.path = url.path.replace(/ +$/, '');
  }

  // The common case, an absolute http(s) or ws(s) URL of plain ASCII with a lower-case name for a host and nothing
  // to encode, normalize or resolve, is read with one regular expression: the state machine costs tens of
  // microseconds a URL, which every fetch pays. Anything else (upper case, userinfo, an IP address, dot segments,
  // a character to encode, a port out of range) goes through the parser above, which gives the same answer for these.
  const FAST_URL =
    /^(https?|wss?):\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)(?::([0-9]{1,5}))?(\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*)?(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@%/?]*))?(?:#([A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*))?$/;
  const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)|\/(?:\.%2e|%2e\.)(?:\/|$)|\/\.(?:\/|$)/i;

  function fastParse(input) {
    const match = FAST_URL.exec(input);
    if (match === null) return null;
    const [, scheme, host, port, path, query, fragment] = match;
    if (endsInANumber(host) || (path !== undefined && DOT_SEGMENT.test(path))) return null;
    const record = newRecord();
    record.scheme = scheme;
    record.host = host;
    if (port !== undefined) {
      const number = parseInt(port, 10);
      if (number > 65535) return null;
      record.port = number === SPECIAL.get(scheme) ? null : number;
    }
    record.path = path === undefined ? [''] : path.slice(1).split('/');
    record.query = query ?? null;
    record.fragment = fragment ?? null;
    return record;
  }

  function parseWithBase(input, base) {
    let baseRecord = null;
    if (base !== undefined) {
      baseRecord = basicParse(toUSV(base), null, undefined, 0);
      if (baseRecord === FAILURE) return FAILURE;
    }
    const text = toUSV(input);
    return (baseRecord === null ? fastParse(text) : null) ?? basicParse(text, baseRecord, undefined, 0);
  }

  class URL {
    #url;
    /** searchParams, made when first asked for (most URLs never are), then kept in step with the query. */
    #query = null;
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError('URL: 1 argument required, but only 0 present');
      const record = parseWithBase(url, base);
      if (record === FAILURE) {
        const error = new TypeError(`Invalid URL: ${`${url}`.slice(0, 200)}`);
        defineProperty(error, 'code', { value: 'ERR_INVALID_URL', writable: true, configurable: true });
        throw error;
      }
      this.#url = record;
    }
    static canParse(url, base = undefined) {
      return parseWithBase(url, base) !== FAILURE;
    }
    static parse(url, base = undefined) {
      try {
        return new URL(url, base);
      } catch {
        return null;
      }
    }
    get href() {
      return serializeURL(this.#url, false);
    }
    set href(value) {
      const record = basicParse(toUSV(value), null, undefined, 0);
      if (record === FAILURE) throw new TypeError(`Invalid URL: ${`${value}`.slice(0, 200)}`);
      this.#url = record;
      // The same searchParams object, now over the new query.
      if (this.#query !== null) {
        replaceParams(this.#query, record.query);
        attachParams(this.#query, record);
      }
    }
    get origin() {
      return originOf(this.#url);
    }
    get protocol() {
      return `${this.#url.scheme}:`;
    }
    set protocol(value) {
      basicParse(`${toUSV(value)}:`, null, this.#url, S.SCHEME_START);
    }
    get username() {
      return this.#url.username;
    }
    set username(value) {
      if (cannotHaveCredentialsOrPort(this.#url)) return;
      this.#url.username = encodeString(toUSV(value), inUserinfo);
    }
    get password() {
      return this.#url.password;
    }
    set password(value) {
      if (cannotHaveCredentialsOrPort(this.#url)) return;
      this.#url.password = encodeString(toUSV(value), inUserinfo);
    }
    get host() {
      const { host, port } = this.#url;
      if (host === null) return '';
      return port === null ? host : `${host}:${port}`;
    }
    set host(value) {
      if (hasOpaquePath(this.#url)) return;
      basicParse(toUSV(value), null, this.#url, S.HOST);
    }
    get hostname() {
      return this.#url.host ?? '';
    }
    set hostname(value) {
      if (hasOpaquePath(this.#url)) return;
      basicParse(toUSV(value), null, this.#url, S.HOSTNAME);
    }
    get port() {
      return this.#url.port === null ? '' : `${this.#url.port}`;
    }
    set port(value) {
      if (cannotHaveCredentialsOrPort(this.#url)) return;
      const text = toUSV(value);
      if (text === '') this.#url.port = null;
      else basicParse(text, null, this.#url, S.PORT);
    }
    get pathname() {
      return serializePath(this.#url);
    }
    set pathname(value) {
      if (hasOpaquePath(this.#url)) return;
      this.#url.path = [];
      basicParse(toUSV(value), null, this.#url, S.PATH_START);
    }
    get search() {
      const { query } = this.#url;
      return query === null || query === '' ? '' : `?${query}`;
    }
    set search(value) {
      const url = this.#url;
      let input = toUSV(value);
      if (input === '') {
        url.query = null;
        if (this.#query !== null) replaceParams(this.#query, null);
        stripTrailingSpaces(url);
        return;
      }
      if (input.startsWith('?')) input = input.slice(1);
      url.query = '';
      basicParse(input, null, url, S.QUERY);
      if (this.#query !== null) replaceParams(this.#query, input);
    }
    get searchParams() {
      if (this.#query === null) {
        this.#query = new URLSearchParams(this.#url.query ?? '');
        attachParams(this.#query, this.#url);
      }
      return this.#query;
    }
    get hash() {
      const { fragment } = this.#url;
      return fragment === null || fragment === '' ? '' : `#${fragment}`;
    }
    set hash(value) {
      const url = this.#url;
      let input = toUSV(value);
      if (input === '') {
        url.fragment = null;
        stripTrailingSpaces(url);
        return;
      }
      if (input.startsWith('#')) input = input.slice(1);
      url.fragment = '';
      basicParse(input, null, url, S.FRAGMENT);
    }
    toString() {
      return this.href;
    }
    toJSON() {
      return this.href;
    }
  }
  defineProperty(URL.prototype, Symbol.toStringTag, { value: 'URL' });
  for (const name of [
    'href',
    'origin',
    'protocol',
    'username',
    'password',
    'host',
    'hostname',
    'port',
    'pathname',
    'search',
    'searchParams',
    'hash',
  ]) {
    defineProperty(URL.prototype, name, { enumerable: true });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Headers (Fetch Standard): names lower-cased, values normalized, iteration sorted and combined with set-cookie
  // kept apart.

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

  const BAD_VALUE = /[\0\n\r]/;
  const normalizeValue = (value) => `${value}`.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  const checkName = (name, label) => {
    const text = `${name}`;
    if (!TOKEN.test(text)) throw new TypeError(`${label}: "${text.slice(0, 100)}" is not a valid header name`);
    return text.toLowerCase();
  };
  const checkValue = (value, name, label) => {
    const text = normalizeValue(value);
    if (BAD_VALUE.test(text)) throw new TypeError(`${label}: the value of header "${name}" is not valid`);
    return text;
  };

  class Headers {
    /** [lower-cased name, value] in the order they were added. */
    #list = [];
    #immutable = false;
    constructor(init = undefined) {
      if (init === undefined || init === null) return;
      if (typeof init !== 'object' && typeof init !== 'function') {
        throw new TypeError('Headers: the init must be an object, a Headers or a sequence of pairs');
      }
      if (#list in init) {
        this.#list = init.#list.map(([name, value]) => [name, value]);
        return;
      }
      const iterator = init[Symbol.iterator];
      if (iterator !== undefined && iterator !== null) {
        if (typeof iterator !== 'function') throw new TypeError('Headers: the init is not iterable');
        for (const pair of init) {
          const entry = [...pair];
          if (entry.length !== 2) throw new TypeError('Headers: each pair of the init must have exactly two items');
          this.append(entry[0], entry[1]);
        }
        return;
      }
      for (const key of Reflect.ownKeys(init)) {
        if (typeof key !== 'string') continue;
        const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
        if (descriptor === undefined || !descriptor.enumerable) continue;
        this.append(key, init[key]);
      }
    }
    static make(list, immutable) {
      const headers = new Headers();
      headers.#list = list;
      headers.#immutable = immutable;
      return headers;
    }
    static listOf(headers) {
      return headers.#list;
    }
    #mutable(label) {
      if (this.#immutable) throw new TypeError(`${label}: these headers are immutable`);
    }
    append(name, value) {
      const key = checkName(name, 'Headers.append');
      const text = checkValue(value, key, 'Headers.append');
      this.#mutable('Headers.append');
      this.#list.push([key, text]);
    }
    delete(name) {
      const key = checkName(name, 'Headers.delete');
      this.#mutable('Headers.delete');
      this.#list = this.#list.filter(([n]) => n !== key);
    }
    get(name) {
      const key = checkName(name, 'Headers.get');
      const values = this.#list.filter(([n]) => n === key).map(([, value]) => value);
      return values.length === 0 ? null : values.join(', ');
    }
    getSetCookie() {
      return this.#list.filter(([n]) => n === 'set-cookie').map(([, value]) => value);
    }
    has(name) {
      const key = checkName(name, 'Headers.has');
      return this.#list.some(([n]) => n === key);
    }
    set(name, value) {
      const key = checkName(name, 'Headers.set');
      const text = checkValue(value, key, 'Headers.set');
      this.#mutable('Headers.set');
      const at = this.#list.findIndex(([n]) => n === key);
      if (at === -1) this.#list.push([key, text]);
      else {
        this.#list[at] = [key, text];
        this.#list = this.#list.filter(([n], index) => n !== key || index <= at);
      }
    }
    /** The Fetch Standard's "sort and combine". */
    #sorted() {
      const names = [...new Set(this.#list.map(([n]) => n))].sort();
      const out = [];
      for (const name of names) {
        if (name === 'set-cookie') {
          for (const [n, value] of this.#list) if (n === name) out.push([name, value]);
        } else out.push([name, this.get(name)]);
      }
      return out;
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function') throw new TypeError('Headers.forEach: the callback is not a function');
      for (let i = 0; ; i++) {
        const pairs = this.#sorted();
        if (i >= pairs.length) return;
        apply(callback, thisArg, [pairs[i][1], pairs[i][0], this]);
      }
    }
    *entries() {
      for (let i = 0; ; i++) {
        const pairs = this.#sorted();
        if (i >= pairs.length) return;
        yield pairs[i];
      }
    }
    *keys() {
      for (const [name] of this.entries()) yield name;
    }
    *values() {
      for (const [, value] of this.entries()) yield value;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }
  const makeHeaders = Headers.make;
  const headerList = Headers.listOf;
  delete Headers.make;
  delete Headers.listOf;
  defineProperty(Headers.prototype, Symbol.toStringTag, { value: 'Headers' });

  // ---------------------------------------------------------------------------------------------------------------
  // Bodies, Request and Response. A body is held as a latin1 string (how it crossed from the host) or as bytes.

  /** [bytes as latin1, content type or null] of a body init, as the Fetch Standard extracts it. */
  function extractBody(body, label) {
    if (body instanceof URLSearchParams) {
      return [latin1(utf8Encode(body.toString())), 'application/x-www-form-urlencoded;charset=UTF-8'];
    }
    if (isArrayBuffer(body) || isView(body)) return [latin1(bytesOf(body, label)), null];
    if (body instanceof Body) {
      throw new TypeError(`${label}: a Request or Response is not a body; read it with text() or arrayBuffer() first`);
    }
    if (body !== null && typeof body === 'object' && typeof body.getReader === 'function') {
      throw new TypeError(`${label}: streams are not supported in toolhost; pass a string or bytes`);
    }
    return [latin1(utf8Encode(`${body}`)), 'text/plain;charset=UTF-8'];
  }

  const BODY = Symbol('body');
  class Body {
    /** The body as latin1, or null when there is none. */
    #text;
    #bodyUsed = false;
    constructor(key, text) {
      if (key !== BODY) throw new TypeError('Illegal constructor');
      this.#text = text;
    }
    get bodyUsed() {
      return this.#bodyUsed;
    }
    #consume(label) {
      if (this.#bodyUsed) return Promise.reject(new TypeError(`${label}: the body has already been read`));
      this.#bodyUsed = true;
      return Promise.resolve(this.#text ?? '');
    }
    text() {
      return this.#consume('text').then(utf8DecodeLatin1);
    }
    json() {
      return this.#consume('json').then((text) => JSON.parse(utf8DecodeLatin1(text)));
    }
    arrayBuffer() {
      return this.#consume('arrayBuffer').then((text) => fromLatin1(text).buffer);
    }
    bytes() {
      return this.#consume('bytes').then(fromLatin1);
    }
    blob() {
      return Promise.reject(new TypeError('blob() is not supported in toolhost: use arrayBuffer() or text()'));
    }
    formData() {
      return Promise.reject(new TypeError('formData() is not supported in toolhost: use text() or json()'));
    }
    static textOf(body) {
      return body.#text;
    }
    static used(body) {
      return body.#bodyUsed;
    }
    static markUsed(body) {
      body.#bodyUsed = true;
    }
  }
  const bodyText = Body.textOf;
  const bodyUsed = Body.used;
  const markBodyUsed = Body.markUsed;
  delete Body.textOf;
  delete Body.used;
  delete Body.markUsed;

  class Request extends Body {
    #url;
    #method;
    #headers;
    #signal;
    #redirect;
    constructor(input, init = undefined) {
      if (arguments.length === 0) throw new TypeError('Request: 1 argument required, but only 0 present');
      const options = init === undefined || init === null ? {} : init;
      let url;
      let method = 'GET';
      let headers;
      let text = null;
      let signal = null;
      let redirect = 'follow';
      if (input instanceof Request) {
        url = input.#url;
        method = input.#method;
        headers = new Headers(input.#headers);
        text = bodyText(input);
        signal = input.#signal;
        redirect = input.#redirect;
        if (text !== null && options.body === undefined) {
          if (bodyUsed(input)) throw new TypeError('Request: the body of the input request has already been read');
          markBodyUsed(input);
        }
      } else {
        let parsed;
        try {
          parsed = new URL(input);
        } catch {
          throw new TypeError(`Failed to parse URL from ${`${input}`.slice(0, 200)}`);
        }
        url = parsed.href;
      }
      if (options.method !== undefined) {
        const given = `${options.method}`;
        if (!TOKEN.test(given)) throw new TypeError(`Request: "${given.slice(0, 100)}" is not a valid HTTP method`);
        // The standard upper-cases six methods; the host is given every method upper-cased.
        method = given.toUpperCase();
        if (method === 'CONNECT' || method === 'TRACE' || method === 'TRACK') {
          throw new TypeError(`Request: the method ${method} is forbidden`);
        }
      }
      if (options.headers !== undefined) headers = new Headers(options.headers);
      headers ??= new Headers();
      if (options.signal !== undefined && options.signal !== null) {
        if (!(options.signal instanceof AbortSignal)) throw new TypeError('Request: signal must be an AbortSignal');
        signal = options.signal;
      } else if (options.signal === null) signal = null;
      if (options.redirect !== undefined) {
        redirect = `${options.redirect}`;
        if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error') {
          throw new TypeError(`Request: redirect "${redirect.slice(0, 20)}" is not one of follow, manual, error`);
        }
      }
      if (options.body !== undefined && options.body !== null) {
        if (method === 'GET' || method === 'HEAD') {
          throw new TypeError('Request with GET/HEAD method cannot have body.');
        }
        const [bytes, type] = extractBody(options.body, 'Request');
        text = bytes;
        if (type !== null && !headers.has('content-type')) headers.append('content-type', type);
      } else if (options.body === null) text = null;
      super(BODY, text);
      this.#url = url;
      this.#method = method;
      this.#headers = headers;
      this.#signal = signal ?? new AbortController().signal;
      this.#redirect = redirect;
    }
    get url() {
      return this.#url;
    }
    get method() {
      return this.#method;
    }
    get headers() {
      return this.#headers;
    }
    get signal() {
      return this.#signal;
    }
    get redirect() {
      return this.#redirect;
    }
    clone() {
      if (this.bodyUsed) throw new TypeError('Request.clone: the body has already been read');
      return new Request(this, { body: bodyText(this) === null ? undefined : fromLatin1(bodyText(this)) });
    }
  }
  defineProperty(Request.prototype, Symbol.toStringTag, { value: 'Request' });

  const STATUS_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;
  const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
  const RESPONSE = Symbol('response');

  class Response extends Body {
    #status;
    #statusText;
    #headers;
    #url;
    #redirected;
    #type;
    constructor(body = null, init = undefined) {
      const options = init === undefined || init === null ? {} : init;
      if (body === RESPONSE) {
        super(BODY, options.text);
        this.#status = options.status;
        this.#statusText = options.statusText;
        this.#headers = makeHeaders(
          options.headers.map(([name, value]) => [`${name}`.toLowerCase(), `${value}`]),
          true,
        );
        this.#url = options.url;
        this.#redirected = options.redirected;
        this.#type = 'basic';
        return;
      }
      const status = options.status === undefined ? 200 : Number(options.status);
      if (!Number.isInteger(status) || status < 200 || status > 599) {
        throw new RangeError(`Response: the status ${String(options.status)} is not in the range 200 to 599`);
      }
      const statusText = options.statusText === undefined ? '' : `${options.statusText}`;
      if (!STATUS_TEXT.test(statusText)) throw new TypeError('Response: the statusText is not valid');
      const headers = new Headers(options.headers);
      let text = null;
      if (body !== null && body !== undefined) {
        if (NULL_BODY_STATUS.has(status)) throw new TypeError(`Response: a ${status} response cannot have a body`);
        const [bytes, type] = extractBody(body, 'Response');
        text = bytes;
        if (type !== null && !headers.has('content-type')) headers.append('content-type', type);
      }
      super(BODY, text);
      this.#status = status;
      this.#statusText = statusText;
      this.#headers = makeHeaders(headerList(headers), false);
      this.#url = '';
      this.#redirected = false;
      this.#type = 'default';
    }
    static json(data, init = undefined) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError('Response.json: the data is not JSON-serializable');
      const headers = new Headers(init === undefined || init === null ? undefined : init.headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      return new Response(text, { ...(init ?? {}), headers });
    }
    static error() {
      return new Response(RESPONSE, {
        text: null,
        status: 0,
        statusText: '',
        headers: [],
        url: '',
        redirected: false,
      });
    }
    get type() {
      return this.#status === 0 ? 'error' : this.#type;
    }
    get url() {
      return this.#url;
    }
    get redirected() {
      return this.#redirected;
    }
    get status() {
      return this.#status;
    }
    get ok() {
      return this.#status >= 200 && this.#status <= 299;
    }
    get statusText() {
      return this.#statusText;
    }
    get headers() {
      return this.#headers;
    }
    clone() {
      if (this.bodyUsed) throw new TypeError('Response.clone: the body has already been read');
      return new Response(RESPONSE, {
        text: bodyText(this),
        status: this.#status,
        statusText: this.#statusText,
        headers: headerList(this.#headers).map(([n, v]) => [n, v]),
        url: this.#url,
        redirected: this.#redirected,
      });
    }
  }
  defineProperty(Response.prototype, Symbol.toStringTag, { value: 'Response' });

  // ---------------------------------------------------------------------------------------------------------------
  // fetch: the request is checked and encoded here and made by the host (ToolBridge.fetch); the answer is a
  // Response over a copy of the host's bytes.

  const networkError = (code, message) => {
    const error = new TypeError(`fetch failed: ${code}: ${message}`);
    defineProperty(error, 'code', { value: code, writable: true, enumerable: true, configurable: true });
    return error;
  };

  const { fetch } = {
    fetch(input, init = undefined) {
      let request;
      try {
        request = input instanceof Request && init === undefined ? input : new Request(input, init);
      } catch (error) {
        return Promise.reject(error);
      }
      const signal = request.signal;
      if (signal.aborted) return Promise.reject(signal.reason);
      const url = request.url;
      if (url.length > caps.fetchUrlChars) {
        return Promise.reject(new TypeError(`fetch: the URL is longer than ${caps.fetchUrlChars} characters`));
      }
      const headers = headerList(request.headers).map(([n, v]) => [n, v]);
      let headerBytes = 0;
      for (const [name, value] of headers) headerBytes += name.length + utf8Length(value) + 4;
      if (headerBytes > caps.fetchHeaderBytes) {
        return Promise.reject(new TypeError(`fetch: the headers are larger than ${caps.fetchHeaderBytes} bytes`));
      }
      const body = bodyText(request);
      if (body !== null) {
        if (bodyUsed(request)) return Promise.reject(new TypeError('fetch: the request body has already been read'));
        markBodyUsed(request);
        if (body.length > caps.fetchBodyBytes) {
          return Promise.reject(new TypeError(`fetch: the request body is larger than ${caps.fetchBodyBytes} bytes`));
        }
      }
      if (hooks === null) return Promise.reject(new TypeError('fetch: no run is in progress'));
      /** @type {Record<string, unknown>} */
      const meta = { url, method: request.method, headers, body: body !== null };
      // "manual" answers a 3xx as it is (with its Location header, as Node's fetch does, not an opaque response).
      if (request.redirect !== 'follow') meta.redirect = request.redirect;
      const timeoutMs = timeoutOf(signal);
      if (timeoutMs !== undefined) meta.timeoutMs = timeoutMs;
      const call = hooks.request(JSON.stringify(meta), body ?? '');
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          call.abort();
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        call.promise.then(
          (answer) => {
            signal.removeEventListener('abort', onAbort);
            if (!answer.ok) {
              let failure;
              try {
                failure = JSON.parse(answer.payload);
              } catch {
                failure = { code: 'NETWORK_ERROR', message: answer.payload };
              }
              reject(networkError(`${failure.code}`, `${failure.message}`));
              return;
            }
            const head = JSON.parse(answer.payload);
            resolve(
              new Response(RESPONSE, {
                text: answer.body,
                status: head.status,
                statusText: head.statusText,
                headers: head.headers,
                url: head.url,
                redirected: head.redirected,
              }),
            );
          },
          (error) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        );
      });
    },
  };

  // ---------------------------------------------------------------------------------------------------------------
  // crypto: random bytes, digests and HMAC computed by the host (node:crypto) from copies.

  const INTEGER_ARRAYS = new Set([
    'Int8Array',
    'Uint8Array',
    'Uint8ClampedArray',
    'Int16Array',
    'Uint16Array',
    'Int32Array',
    'Uint32Array',
    'BigInt64Array',
    'BigUint64Array',
  ]);
  const HASHES = new Map([
    ['sha-1', 'SHA-1'],
    ['sha-256', 'SHA-256'],
    ['sha-384', 'SHA-384'],
    ['sha-512', 'SHA-512'],
  ]);

  function randomBytes(count) {
    return fromLatin1(hostCrypto('random', `${count}`, '', ''));
  }

  const algorithmName = (algorithm) =>
    `${typeof algorithm === 'string' ? algorithm : algorithm !== null && typeof algorithm === 'object' ? algorithm.name : ''}`;

  function hashOf(algorithm, label) {
    const name = HASHES.get(algorithmName(algorithm).toLowerCase());
    if (name === undefined) {
      throw new DOMException(
        `${label}: the algorithm ${algorithmName(algorithm).slice(0, 50)} is not supported (SHA-1, SHA-256, SHA-384 and SHA-512 are)`,
        'NotSupportedError',
      );
    }
    return name;
  }

  function cryptoData(data, label) {
    const bytes = bytesOf(data, label);
    if (bytes.length > caps.cryptoDataBytes) {
      throw new DOMException(
        `${label}: data larger than ${caps.cryptoDataBytes} bytes is not supported in toolhost`,
        'NotSupportedError',
      );
    }
    return latin1(bytes);
  }

  const KEY = Symbol('key');
  class CryptoKey {
    #secret;
    #algorithm;
    #extractable;
    #usages;
    constructor(key, secret, algorithm, extractable, usages) {
      if (key !== KEY) throw new TypeError('Illegal constructor');
      this.#secret = secret;
      this.#algorithm = algorithm;
      this.#extractable = extractable;
      this.#usages = usages;
    }
    get type() {
      return 'secret';
    }
    get extractable() {
      return this.#extractable;
    }
    get algorithm() {
      return { name: 'HMAC', hash: { name: this.#algorithm.hash }, length: this.#algorithm.length };
    }
    get usages() {
      return [...this.#usages];
    }
    static use(key, usage, label) {
      if (!(key instanceof CryptoKey)) throw new TypeError(`${label}: the key is not a CryptoKey`);
      if (!key.#usages.includes(usage)) {
        throw new DOMException(`${label}: the key does not allow "${usage}"`, 'InvalidAccessError');
      }
      return key;
    }
    static secretOf(key) {
      return key.#secret;
    }
    static hashOf(key) {
      return key.#algorithm.hash;
    }
  }
  const useKey = CryptoKey.use;
  const keySecret = CryptoKey.secretOf;
  const keyHash = CryptoKey.hashOf;
  delete CryptoKey.use;
  delete CryptoKey.secretOf;
  delete CryptoKey.hashOf;
  defineProperty(CryptoKey.prototype, Symbol.toStringTag, { value: 'CryptoKey' });

  const checkHmac = (algorithm, label) => {
    if (algorithmName(algorithm).toLowerCase() !== 'hmac') {
      throw new DOMException(`${label}: only HMAC is supported in toolhost`, 'NotSupportedError');
    }
  };
  const hmac = (key, data, label) =>
    fromLatin1(hostCrypto('hmac', keyHash(key), keySecret(key), cryptoData(data, label))).buffer;

  const SUBTLE = Symbol('subtle');
  // Each method answers a promise and rejects (never throws), as WebCrypto's do.
  const settled = (work) => {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  class SubtleCrypto {
    constructor(key) {
      if (key !== SUBTLE) throw new TypeError('Illegal constructor');
    }
    digest(algorithm, data) {
      return settled(() => {
        const hash = hashOf(algorithm, 'digest');
        return fromLatin1(hostCrypto('digest', hash, cryptoData(data, 'digest'), '')).buffer;
      });
    }
    importKey(format, keyData, algorithm, extractable, keyUsages) {
      return settled(() => {
        if (`${format}` !== 'raw') {
          throw new DOMException(
            `importKey: the format ${`${format}`.slice(0, 20)} is not supported (raw is)`,
            'NotSupportedError',
          );
        }
        checkHmac(algorithm, 'importKey');
        const hash = hashOf(algorithm.hash, 'importKey');
        const usages = [...keyUsages].map((usage) => `${usage}`);
        if (usages.length === 0 || usages.some((usage) => usage !== 'sign' && usage !== 'verify')) {
          throw new DOMException('importKey: an HMAC key is used to "sign" and "verify"', 'SyntaxError');
        }
        const bytes = bytesOf(keyData, 'importKey');
        if (bytes.length === 0) throw new DOMException('importKey: the key is empty', 'DataError');
        const length = algorithm.length === undefined ? bytes.length * 8 : Number(algorithm.length);
        if (length !== bytes.length * 8) {
          throw new DOMException('importKey: the length does not match the key data', 'DataError');
        }
        const secret = cryptoData(bytes, 'importKey');
        return new CryptoKey(KEY, secret, { hash, length }, Boolean(extractable), usages);
      });
    }
    exportKey(format, key) {
      return settled(() => {
        if (`${format}` !== 'raw') throw new DOMException('exportKey: only raw is supported', 'NotSupportedError');
        if (!(key instanceof CryptoKey)) throw new TypeError('exportKey: the key is not a CryptoKey');
        if (!key.extractable) throw new DOMException('exportKey: the key is not extractable', 'InvalidAccessError');
        return fromLatin1(keySecret(key)).buffer;
      });
    }
    sign(algorithm, key, data) {
      return settled(() => {
        checkHmac(algorithm, 'sign');
        return hmac(useKey(key, 'sign', 'sign'), data, 'sign');
      });
    }
    verify(algorithm, key, signature, data) {
      return settled(() => {
        checkHmac(algorithm, 'verify');
        const expected = new Uint8Array(hmac(useKey(key, 'verify', 'verify'), data, 'verify'));
        const given = bytesOf(signature, 'verify');
        if (given.length !== expected.length) return false;
        let difference = 0;
        for (let i = 0; i < given.length; i++) difference |= given[i] ^ expected[i];
        return difference === 0;
      });
    }
  }
  defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: 'SubtleCrypto' });

  const subtle = new SubtleCrypto(SUBTLE);
  class Crypto {
    constructor(key) {
      if (key !== SUBTLE) throw new TypeError('Illegal constructor');
    }
    get subtle() {
      return subtle;
    }
    getRandomValues(array) {
      const kind = isView(array) ? apply(typedArrayTag, array, []) : undefined;
      if (kind === undefined || !INTEGER_ARRAYS.has(kind)) {
        throw new DOMException('getRandomValues: the argument must be an integer typed array', 'TypeMismatchError');
      }
      if (array.byteLength > 65536) {
        throw new DOMException(
          `getRandomValues: the ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`,
          'QuotaExceededError',
        );
      }
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(randomBytes(array.byteLength));
      return array;
    }
    randomUUID() {
      const bytes = randomBytes(16);
      bytes[6] = (bytes[6] & 0x0f) | 0x40;
      bytes[8] = (bytes[8] & 0x3f) | 0x80;
      let hex = '';
      for (const byte of bytes) hex += (byte < 16 ? '0' : '') + byte.toString(16);
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
  }
  defineProperty(Crypto.prototype, Symbol.toStringTag, { value: 'Crypto' });
  const crypto = new Crypto(SUBTLE);

  const globals = {
    URL,
    URLSearchParams,
    TextEncoder,
    TextDecoder,
    atob,
    btoa,
    Headers,
    Request,
    Response,
    fetch,
    AbortController,
    AbortSignal,
    DOMException,
    crypto,
    CryptoKey,
  };
  harden(globals);
  harden(Event);
  harden(EventTarget);
  harden(Body);
  harden(SubtleCrypto);
  harden(Crypto);
  // Reached through a getter only, which harden does not call.
  harden(subtle);

  globalThis.__toolhost_web = harden({
    globals,
    /** The prelude's hooks, once: setTimer(callback, ms, keepsRunOpen) and request(metaJson, body). */
    connect(given) {
      if (hooks !== null) throw new TypeError('already connected');
      hooks = given;
    },
    AbortController,
    abortError,
    fireAbort,
    DOMException,
  });
})();
