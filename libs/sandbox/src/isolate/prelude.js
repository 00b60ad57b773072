// Evaluated once per isolate after the SES shim and isolate/realm.js (plain JavaScript: it runs inside the
// isolate, not in Node). It returns the runtime's entry points. The host callback `__toolhost_send` is
// captured in this closure and deleted from the global, so user code can never reach it: every value user code
// sees is created here or by JSON.parse, and everything leaves through `send` as strings and numbers only.
(function () {
  'use strict';
  const send = globalThis.__toolhost_send;
  delete globalThis.__toolhost_send;
  // What code sees, built by isolate/realm.js, which ran before this and locked the realm down.
  const realm = globalThis.__toolhost_realm;
  delete globalThis.__toolhost_realm;
  // The web APIs (isolate/web.js, evaluated just before this); their timers and fetch reach the host through here.
  const web = globalThis.__toolhost_web;
  delete globalThis.__toolhost_web;
  // BOUNDARY_CAPS (boundary-caps.ts): checked here before a value is copied out, and again by the host.
  const caps = JSON.parse(globalThis.__toolhost_caps);
  delete globalThis.__toolhost_caps;

  const { freeze, hasOwn, is, isExtensible, getPrototypeOf, getOwnPropertyDescriptor } = Object;
  const { ownKeys } = Reflect;
  const { stringify } = JSON;
  // Not the realm's JSON.parse, which refuses texts too long for a small memoryMb: what the host sends is bounded there.
  const { parse } = realm;
  // SES puts these on every compartment's global; the contract promises ECMAScript built-ins and console only.
  const HIDDEN_GLOBALS = ['lockdown', 'harden', 'Compartment', 'repairIntrinsics', 'hardenIntrinsics'];
  // Names a Proxy must not answer, or JSON.stringify, String(), await and friends would dispatch tool calls.
  const RESERVED = new Set([
    'then',
    'catch',
    'finally',
    'toJSON',
    'toString',
    'valueOf',
    'toLocaleString',
    'constructor',
    'hasOwnProperty',
    'isPrototypeOf',
    'propertyIsEnumerable',
    '__proto__',
    '__defineGetter__',
    '__defineSetter__',
    '__lookupGetter__',
    '__lookupSetter__',
    'inspect',
    'asymmetricMatch',
    'nodeType',
    '$$typeof',
  ]);
  const TOOL_FILE = /tool\.js:(\d+)(?::(\d+))?/;
  const TOOL_FILE_ALL = /tool\.js:(\d+)(?::(\d+))?/g;
  const FRAME = /\n\s+at /;
  const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;
  const noop = harden(() => undefined);

  const runs = new Map();
  // The run whose entry this is. Every entry is made for one run (start, settle, cancel) and ends with its microtasks
  // run, and no object of one run is reachable from another's code: so code running now is this run's, and the shared
  // timer functions and fetch act for it.
  let current = null;

  // Timers: the host keeps one host timer per pending timer, bounded by the run's wall clock, and fires it by
  // entering the isolate (`settle` with the timer's id); a run with a pending timer that keeps it open is not ended
  // as "awaits a promise that nothing can settle". All are cleared when the run ends, on both sides.
  function addTimer(callback, delay, args, repeat, keepsOpen) {
    const run = current;
    if (run === null || run.closed) return 0;
    if (typeof callback !== 'function') {
      throw new TypeError(
        `${repeat ? 'setInterval' : 'setTimeout'}: the callback must be a function (code in a string is not evaluated)`,
      );
    }
    if (run.timers.size >= caps.timersPerRun) {
      throw new RangeError(
        `${repeat ? 'setInterval' : 'setTimeout'}: a run may have at most ${caps.timersPerRun} timers pending`,
      );
    }
    let ms = Number(delay);
    if (!(ms >= 0)) ms = 0;
    const id = run.nextCall;
    run.nextCall += 1;
    run.timers.set(id, { callback, args, repeat });
    post(run, 'timer', id, `${ms}`, `${repeat ? 'i' : ''}${keepsOpen ? '' : 'u'}`);
    return id;
  }

  function clearTimer(id) {
    const run = current;
    if (run === null || run.closed || typeof id !== 'number') return;
    if (run.timers.delete(id)) post(run, 'clear', id, '', '');
  }

  // Methods, so that like Node's they have no prototype and cannot be called with new.
  const timers = {
    setTimeout(callback, delay = 0, ...args) {
      return addTimer(callback, delay, args, false, true);
    },
    clearTimeout(id) {
      clearTimer(id);
    },
    setInterval(callback, delay = 0, ...args) {
      return addTimer(callback, delay, args, true, true);
    },
    clearInterval(id) {
      clearTimer(id);
    },
  };
  const globals = realm.globalsWith({ ...web.globals, ...timers });

  web.connect(
    harden({
      // AbortSignal.timeout's: like Node's, it does not keep the run open.
      setTimer: (callback, ms, keepsOpen) => addTimer(callback, ms, [], false, keepsOpen),
      // fetch's channel: the request as JSON text and its body as latin1; answers the host's reply, and an abort.
      request(metaJson, body) {
        const run = current;
        if (run === null || run.closed) {
          return { promise: Promise.reject(new TypeError('fetch: the invocation has ended')), abort: noop };
        }
        const callId = run.nextCall;
        run.nextCall += 1;
        const promise = new Promise((resolve) => {
          run.pending.set(callId, { raw: resolve });
        });
        post(run, 'fetch', callId, metaJson, body);
        return {
          promise,
          abort: () => {
            if (!run.closed && run.pending.delete(callId)) post(run, 'abort', callId, '', '');
          },
        };
      },
    }),
  );

  // The host answers false once it has ended the run (budget refused, wall clock): stop talking for it at once, so
  // a loop that keeps calling costs no more host round trips.
  function post(run, kind, callId, a, b) {
    if (send(run.id, kind, callId, a, b) === false) close(run);
  }

  function close(run) {
    if (run.closed) return;
    run.closed = true;
    run.pending.clear();
    run.timers.clear();
    runs.delete(run.id);
    // The pi `signal`: aborted when the run ends, however it ends; listeners that throw are reported, not thrown.
    if (run.controller !== null) run.controller.abort(new web.DOMException('the invocation has ended', 'AbortError'));
  }

  const cut = (string, max) => (string.length > max ? string.slice(0, max) : string);

  // Any value, as at most `max` characters: huge strings, throwing getters, proxies, Symbols and BigInts included.
  function text(value, max) {
    let out;
    try {
      if (typeof value === 'string') out = value;
      else if (value instanceof Error) out = `${String(value.name)}: ${String(value.message)}`;
      else if (value !== null && typeof value === 'object') {
        const json = stringify(value);
        out = typeof json === 'string' ? json : String(value);
      } else out = String(value);
    } catch {
      out = '[unprintable]';
    }
    return cut(out, max);
  }

  // One property of a thrown value: a getter that throws, a Proxy trap or a revoked Proxy reads as undefined.
  function read(value, key) {
    try {
      return value[key];
    } catch {
      return undefined;
    }
  }

  function appendLog(run, line) {
    if (run.closed || run.logClosed) return;
    const room = run.maxLogBytes - run.logBytes;
    if (line.length + 1 > room) {
      run.logClosed = true;
      post(run, 'log', 0, line.slice(0, Math.max(0, room - 1)), 'truncated');
      return;
    }
    run.logBytes += line.length + 1;
    post(run, 'log', 0, line, '');
  }

  function makeConsole(run) {
    const writer = (prefix) =>
      freeze((...args) => {
        if (run.closed || run.logClosed) return;
        const max = run.maxLogBytes;
        appendLog(run, cut(prefix + args.map((arg) => text(arg, max)).join(' '), max));
      });
    return freeze({
      log: writer(''),
      info: writer(''),
      debug: writer(''),
      warn: writer('[warn] '),
      error: writer('[error] '),
    });
  }

  function callBridge(run, op, name, value) {
    if (op === 'tool' && name.length > caps.toolNameChars) {
      return Promise.reject(new TypeError(`ctx.tools: a tool name is at most ${caps.toolNameChars} characters`));
    }
    const label = op === 'tool' ? `ctx.tools.${name}` : 'ctx.audit';
    if (run.closed) return Promise.reject(new Error(`${label}: the invocation has ended`));
    // The worker's bridge allows the same; refused here, the call costs no host round trip and no copy.
    if (op === 'audit' && (typeof name !== 'string' || name.length === 0 || name.length > caps.auditEventChars)) {
      return Promise.reject(
        new TypeError(`ctx.audit(event, data): event must be a string of 1 to ${caps.auditEventChars} characters`),
      );
    }
    let json;
    try {
      json = value === undefined ? (op === 'tool' ? '{}' : '') : stringify(value);
    } catch (error) {
      return Promise.reject(new TypeError(`${label}: the argument is not JSON-serializable (${text(error, 200)})`));
    }
    if (typeof json !== 'string')
      return Promise.reject(new TypeError(`${label}: the argument is not JSON-serializable`));
    const maxBytes = op === 'tool' ? run.maxInputBytes : caps.auditDataBytes;
    if (json.length > maxBytes) {
      return Promise.reject(new RangeError(`${label}: the argument is larger than ${maxBytes} bytes`));
    }
    const callId = run.nextCall;
    run.nextCall += 1;
    const promise = new Promise((resolve, reject) => {
      run.pending.set(callId, { resolve, reject });
    });
    post(run, op, callId, name, json);
    return promise;
  }

  function makeCtx(run, ids) {
    const toolFunctions = new Map();
    const tools = new Proxy(
      freeze(Object.create(null)),
      freeze({
        get(_target, name) {
          if (typeof name !== 'string' || RESERVED.has(name)) return undefined;
          let fn = toolFunctions.get(name);
          if (fn === undefined) {
            fn = freeze((input) => callBridge(run, 'tool', name, input));
            toolFunctions.set(name, fn);
          }
          return fn;
        },
        set: () => false,
        defineProperty: () => false,
        deleteProperty: () => false,
      }),
    );
    return freeze({
      agentId: ids.agentId,
      agentName: ids.agentName,
      powerUserId: ids.powerUserId,
      toolCallId: ids.toolCallId,
      conversationId: ids.conversationId,
      invocationId: ids.invocationId,
      tools,
      audit: freeze((event, data) => callBridge(run, 'audit', event, data)),
    });
  }

  function makePi(registered) {
    const registerTool = freeze((definition) => {
      registered.push(definition);
    });
    return new Proxy(
      freeze(Object.create(null)),
      freeze({
        // Other pi API calls (commands, events, flags) have no meaning here and are accepted as no-ops.
        get(_target, name) {
          if (name === 'registerTool') return registerTool;
          return typeof name === 'string' && !RESERVED.has(name) ? noop : undefined;
        },
        set: () => false,
        defineProperty: () => false,
        deleteProperty: () => false,
      }),
    );
  }

  // What one registerTool call declared, for the host to check (discovery runs no execute): the fields a listing
  // needs and whether it could run. Read through `read`, so a throwing getter reads as undefined.
  function describeRegistration(definition) {
    if (definition === null || typeof definition !== 'object') return null;
    return {
      name: read(definition, 'name'),
      label: read(definition, 'label'),
      description: read(definition, 'description'),
      parameters: read(definition, 'parameters'),
      executable: typeof read(definition, 'execute') === 'function',
    };
  }

  async function invoke(shape, entry, input, ctx, env, opts, signal) {
    if (shape === 'body') {
      const secret = freeze((name) => (hasOwn(env, name) ? env[name] : ''));
      return entry(input, ctx, input, env, env, secret);
    }
    if (shape === 'handle') {
      if (typeof entry !== 'function') throw new TypeError('the code declares no function named handle');
      return entry(input, ctx);
    }
    if (typeof entry !== 'function') throw new TypeError('a pi extension module must export a default function');
    const registered = [];
    await entry(makePi(registered));
    if (opts.piDiscover === true) return registered.map(describeRegistration);
    const wanted = opts.piToolName;
    const tool =
      wanted === undefined
        ? registered[0]
        : registered.find((t) => t !== null && typeof t === 'object' && t.name === wanted);
    if (tool === null || typeof tool !== 'object') {
      throw new TypeError(
        wanted === undefined ? 'the pi module registered no tool' : `the pi module registered no tool named ${wanted}`,
      );
    }
    const execute = tool.execute;
    if (typeof execute !== 'function') throw new TypeError('the registered pi tool has no execute function');
    const toolCallId = ctx.toolCallId === undefined ? ctx.invocationId : ctx.toolCallId;
    return Reflect.apply(execute, tool, [toolCallId, input, signal, noop, ctx]);
  }

  function end(run, kind, a, b) {
    close(run);
    // Only a run that ended on its own gives its compartment back; one the host cancelled may have been stopped
    // anywhere. It is checked when taken (reclaim).
    if (run.compartment !== null && returned.length < MAX_RETURNED) {
      returned.push({ compartment: run.compartment, console: run.console });
    }
    run.compartment = null;
    send(run.id, kind, 0, a, b);
  }

  function finish(run, shape, value) {
    if (run.closed) return;
    try {
      let result = value;
      let content = '';
      if (shape === 'pi' && value !== null && typeof value === 'object' && Array.isArray(value.content)) {
        const texts = [];
        for (const item of value.content) {
          if (item !== null && typeof item === 'object' && item.type === 'text' && typeof item.text === 'string')
            texts.push(item.text);
        }
        content = stringify(texts);
        result = value.details;
      }
      const json = result === undefined ? 'null' : stringify(result);
      if (typeof json !== 'string') {
        end(run, 'invalid', 'the result is not JSON-serializable (a function or a symbol)', '');
      } else if (json.length > run.maxResultBytes || content.length > run.maxResultBytes) {
        end(run, 'invalid', `the result is larger than ${run.maxResultBytes} bytes`, '');
      } else {
        end(run, 'ok', json, content);
      }
    } catch (error) {
      end(run, 'invalid', `the result is not JSON-serializable: ${describe(error, 0).message}`, '');
    }
  }

  // An uncaught value as {name, message, code?, line?, column?}, each part cut to its cap before it is copied out.
  // `code` only as an error code is written (NETWORK_DENIED, ERR_X): it tells a caller why without parsing the message.
  function describe(error, lineOffset) {
    const out = { name: 'Error', message: '' };
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        const name = read(error, 'name');
        const message = read(error, 'message');
        const stack = read(error, 'stack');
        const code = read(error, 'code');
        if (typeof code === 'string' && ERROR_CODE.test(code)) out.code = code;
        if (typeof name === 'string' || typeof name === 'symbol') out.name = cut(String(name), caps.errorNameChars);
        out.message =
          typeof message === 'string' ? cut(message, caps.errorMessageChars) : text(error, caps.errorMessageChars);
        if (typeof stack === 'string') {
          // The frames follow the message, which may be megabytes long (or contain "tool.js:1" itself).
          const frames = stack.search(FRAME);
          const match = TOOL_FILE.exec(frames < 0 ? cut(stack, 4000) : stack.slice(frames, frames + 4000));
          if (match !== null && Number(match[1]) > lineOffset) {
            out.line = Number(match[1]) - lineOffset;
            if (match[2] !== undefined) out.column = Number(match[2]);
          }
        }
        out.message = realm.explain(out.name, out.message);
        // SES names positions in its messages ("rejected at tool.js:3"): give them in the tool's own lines.
        out.message = out.message.replace(TOOL_FILE_ALL, (_all, line, column) =>
          column === undefined
            ? `line ${Number(line) - lineOffset}`
            : `line ${Number(line) - lineOffset}, column ${column}`,
        );
      } else {
        out.name = '';
        out.message = text(error, caps.errorMessageChars);
      }
    } catch {
      out.message = 'an exception that could not be read';
    }
    out.message = cut(out.message, caps.errorMessageChars);
    return out;
  }

  function fail(run, error) {
    if (run.closed) return;
    end(run, 'error', stringify(describe(error, run.lineOffset)), '');
  }

  // A Compartment for the next run, ready before it starts: creating one is most of the fixed cost of a run (about
  // 100 µs of CPU in SES 2.3), so prepare() makes one while the isolate is idle, and the compartment of a run that
  // ended is used again when it is exactly as it was made (see pristine). A new one also evaluates a constant, which
  // builds SES's evaluator for the compartment ahead of the tool's source (about 20-25 µs of the next run's path);
  // the constant defines nothing.
  let spare = null;

  // What each compartment's global was when it was made: its own properties in order, and its prototype.
  const baselines = new WeakMap();
  // Compartments of runs that ended, with the console their run had: checked when taken, never before (the run's
  // last entry may still have microtasks to run when it ends). A few: concurrent runs end close together.
  const returned = [];
  const MAX_RETURNED = 4;
  // Compartments made since prepare() last answered (the host counts them).
  let made = 0;

  function newCompartment() {
    made += 1;
    const compartment = new Compartment({
      __options__: true,
      globals,
    });
    const global = compartment.globalThis;
    for (const name of HIDDEN_GLOBALS) delete global[name];
    // Each run's own console is assigned here (start): the property exists from the first, so it keeps its place.
    global.console = undefined;
    baselines.set(compartment, {
      proto: getPrototypeOf(global),
      properties: ownKeys(global).map((key) => [key, getOwnPropertyDescriptor(global, key)]),
    });
    return compartment;
  }

  /**
   * Whether a run left its compartment's global exactly as it was made: the same own properties in the same order,
   * each with the same value (the console: the run's own), accessors and attributes, the same prototype, still
   * extensible. Every other object a run can reach from the global is hardened (the intrinsics by lockdown, the
   * endowments by the realm, SES's per-compartment evaluators by SES), objects it made are unreachable once the global
   * holds none of them, and nothing of a run runs after its end: its microtasks ran before this entry, the host
   * answers no call or timer of an ended run, and the realm's FinalizationRegistry never calls back. So the next run
   * sees what a new compartment would show it. Reads descriptors only: no getter or proxy trap of the run's code runs.
   */
  function pristine(compartment, console) {
    const global = compartment.globalThis;
    const baseline = baselines.get(compartment);
    if (baseline === undefined || !isExtensible(global) || getPrototypeOf(global) !== baseline.proto) return false;
    const keys = ownKeys(global);
    const { properties } = baseline;
    if (keys.length !== properties.length) return false;
    for (let index = 0; index < keys.length; index += 1) {
      const [key, was] = properties[index];
      if (keys[index] !== key) return false;
      const now = getOwnPropertyDescriptor(global, key);
      if (
        now.get !== was.get ||
        now.set !== was.set ||
        now.writable !== was.writable ||
        now.enumerable !== was.enumerable ||
        now.configurable !== was.configurable ||
        !is(now.value, key === 'console' ? console : was.value)
      ) {
        return false;
      }
    }
    return true;
  }

  // A compartment an ended run left as it was made, if there is one (the others are dropped).
  function reclaim() {
    while (returned.length > 0) {
      const { compartment, console } = returned.pop();
      if (pristine(compartment, console)) return compartment;
    }
    return null;
  }

  function prepare() {
    if (spare === null) spare = reclaim();
    if (spare === null) {
      spare = newCompartment();
      spare.evaluate('0');
    }
    const count = made;
    made = 0;
    return count;
  }

  function start(runId, source, shape, inputJson, ctxJson, envJson, optsJson) {
    const opts = parse(optsJson);
    const run = {
      id: runId,
      pending: new Map(),
      nextCall: 1,
      closed: false,
      logBytes: 0,
      logClosed: false,
      maxLogBytes: opts.maxLogBytes,
      maxInputBytes: opts.maxInputBytes,
      maxResultBytes: opts.maxResultBytes,
      lineOffset: opts.lineOffset,
      /** Pending timers by id: {callback, args, repeat}. */
      timers: new Map(),
      /** The pi `signal`'s controller (pi shape only). */
      controller: shape === 'pi' ? new web.AbortController() : null,
      /** Its compartment and the console in it, once made (start). */
      compartment: null,
      console: null,
    };
    runs.set(runId, run);
    current = run;
    let promise;
    try {
      const compartment = spare ?? reclaim() ?? newCompartment();
      spare = null;
      run.compartment = compartment;
      run.console = makeConsole(run);
      compartment.globalThis.console = run.console;
      const input = parse(inputJson);
      const env = freeze(parse(envJson));
      const ctx = makeCtx(run, parse(ctxJson));
      const signal = run.controller === null ? undefined : run.controller.signal;
      promise = invoke(shape, compartment.evaluate(source), input, ctx, env, opts, signal);
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => finish(run, shape, value),
      (error) => fail(run, error),
    );
  }

  /** A host answer: a ctx call's or a fetch's (`body`, latin1), or a timer firing. */
  function settle(runId, callId, ok, payload, body) {
    const run = runs.get(runId);
    if (run === undefined) return;
    current = run;
    const timer = run.timers.get(callId);
    if (timer !== undefined) {
      if (!timer.repeat) run.timers.delete(callId);
      try {
        Reflect.apply(timer.callback, undefined, timer.args);
      } catch (error) {
        // As in Node, where an uncaught exception in a timer ends the process: the run ends with it.
        fail(run, error);
      }
      return;
    }
    const waiter = run.pending.get(callId);
    if (waiter === undefined) return;
    run.pending.delete(callId);
    if (waiter.raw !== undefined) {
      waiter.raw({ ok, payload, body });
      return;
    }
    if (!ok) {
      waiter.reject(new Error(payload));
      return;
    }
    let value;
    try {
      value = payload === '' ? undefined : parse(payload);
    } catch {
      waiter.reject(new Error('malformed answer from the host'));
      return;
    }
    waiter.resolve(value);
  }

  function cancel(runId) {
    const run = runs.get(runId);
    if (run === undefined) return;
    current = run;
    close(run);
  }

  return freeze({ start, settle, cancel, prepare, active: () => runs.size });
})();
