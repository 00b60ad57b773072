// Evaluated once per isolate right after the SES shim (plain JavaScript: it runs inside the isolate, not in Node).
// It locks the realm down and returns the runtime's three entry points. The host callback `__toolhost_send` is
// captured in this closure and deleted from the global, so user code can never reach it: every value user code
// sees is created here or by JSON.parse, and everything leaves through `send` as strings and numbers only.
(function () {
  'use strict';
  const send = globalThis.__toolhost_send;
  delete globalThis.__toolhost_send;

  // Taken before lockdown(): in a Compartment, SES makes Date.now()/new Date() and Math.random() throw and leaves
  // Intl out; tools need all three, so they get these originals, hardened.
  const OriginalDate = Date;
  const OriginalIntl = Intl;
  const originalRandom = Math.random;

  // errorTaming 'unsafe' keeps error.stack, which is how a USER_ERROR finds the line in the tool's own code.
  lockdown({ errorTaming: 'unsafe' });

  const { freeze, hasOwn } = Object;
  const { stringify, parse } = JSON;
  const SafeMath = harden(Object.fromEntries(Reflect.ownKeys(Math).map((key) => [key, key === 'random' ? originalRandom : Math[key]])));
  harden(OriginalDate);
  harden(OriginalIntl);

  // SES puts these on every compartment's global; the contract promises ECMAScript built-ins and console only.
  const HIDDEN_GLOBALS = ['lockdown', 'harden', 'Compartment'];
  // Names a Proxy must not answer, or JSON.stringify, String(), await and friends would dispatch tool calls.
  const RESERVED = new Set([
    'then', 'catch', 'finally', 'toJSON', 'toString', 'valueOf', 'toLocaleString', 'constructor', 'hasOwnProperty',
    'isPrototypeOf', 'propertyIsEnumerable', '__proto__', '__defineGetter__', '__defineSetter__', '__lookupGetter__',
    '__lookupSetter__', 'inspect', 'asymmetricMatch', 'nodeType', '$$typeof',
  ]);
  const TOOL_FILE = /tool\.js:(\d+):(\d+)/;
  const noop = harden(() => undefined);
  const SIGNAL = harden({
    aborted: false,
    reason: undefined,
    onabort: null,
    addEventListener: noop,
    removeEventListener: noop,
    dispatchEvent: () => true,
    throwIfAborted: noop,
  });

  const runs = new Map();

  function text(value) {
    try {
      if (typeof value === 'string') return value;
      if (value instanceof Error) return `${String(value.name)}: ${String(value.message)}`;
      if (value !== null && typeof value === 'object') {
        const json = stringify(value);
        if (typeof json === 'string') return json;
      }
      return String(value);
    } catch {
      return '[unprintable]';
    }
  }

  function appendLog(run, line) {
    if (run.closed || run.logClosed) return;
    const room = run.maxLogBytes - run.logBytes;
    if (line.length + 1 > room) {
      run.logClosed = true;
      send(run.id, 'log', 0, line.slice(0, Math.max(0, room - 1)), 'truncated');
      return;
    }
    run.logBytes += line.length + 1;
    send(run.id, 'log', 0, line, '');
  }

  function makeConsole(run) {
    const writer = (prefix) => freeze((...args) => appendLog(run, prefix + args.map(text).join(' ')));
    return freeze({
      log: writer(''),
      info: writer(''),
      debug: writer(''),
      warn: writer('[warn] '),
      error: writer('[error] '),
    });
  }

  function callBridge(run, op, name, value) {
    const label = op === 'tool' ? `ctx.tools.${name}` : 'ctx.audit';
    if (run.closed) return Promise.reject(new Error(`${label}: the invocation has ended`));
    if (op === 'audit' && (typeof name !== 'string' || name.length === 0 || name.length > 200)) {
      return Promise.reject(new TypeError('ctx.audit(event, data): event must be a string of 1 to 200 characters'));
    }
    let json;
    try {
      json = value === undefined ? (op === 'tool' ? '{}' : '') : stringify(value);
    } catch (error) {
      return Promise.reject(new TypeError(`${label}: the argument is not JSON-serializable (${text(error)})`));
    }
    if (typeof json !== 'string') return Promise.reject(new TypeError(`${label}: the argument is not JSON-serializable`));
    if (json.length > run.maxInputBytes) {
      return Promise.reject(new RangeError(`${label}: the argument is larger than ${run.maxInputBytes} bytes`));
    }
    const callId = run.nextCall;
    run.nextCall += 1;
    return new Promise((resolve, reject) => {
      run.pending.set(callId, { resolve, reject });
      send(run.id, op, callId, name, json);
    });
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

  async function invoke(shape, entry, input, ctx, env, opts) {
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
    const wanted = opts.piToolName;
    const tool = wanted === undefined ? registered[0] : registered.find((t) => t !== null && typeof t === 'object' && t.name === wanted);
    if (tool === null || typeof tool !== 'object') {
      throw new TypeError(wanted === undefined ? 'the pi module registered no tool' : `the pi module registered no tool named ${wanted}`);
    }
    const execute = tool.execute;
    if (typeof execute !== 'function') throw new TypeError('the registered pi tool has no execute function');
    const toolCallId = ctx.toolCallId === undefined ? ctx.invocationId : ctx.toolCallId;
    return Reflect.apply(execute, tool, [toolCallId, input, SIGNAL, noop, ctx]);
  }

  function end(run, kind, a, b) {
    run.closed = true;
    run.pending.clear();
    runs.delete(run.id);
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
          if (item !== null && typeof item === 'object' && item.type === 'text' && typeof item.text === 'string') texts.push(item.text);
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

  function describe(error, lineOffset) {
    const out = { name: 'Error', message: '' };
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        const { name, message, stack } = error;
        if (typeof name === 'string') out.name = name;
        out.message = typeof message === 'string' ? message : text(error);
        const match = typeof stack === 'string' ? TOOL_FILE.exec(stack) : null;
        if (match !== null && Number(match[1]) > lineOffset) {
          out.line = Number(match[1]) - lineOffset;
          out.column = Number(match[2]);
        }
      } else {
        out.name = '';
        out.message = String(error);
      }
    } catch {
      out.message = 'an exception that could not be read';
    }
    out.message = out.message.slice(0, 4000);
    return out;
  }

  function fail(run, error) {
    if (run.closed) return;
    end(run, 'error', stringify(describe(error, run.lineOffset)), '');
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
    };
    runs.set(runId, run);
    let promise;
    try {
      const compartment = new Compartment({
        __options__: true,
        globals: { Date: OriginalDate, Intl: OriginalIntl, Math: SafeMath, console: makeConsole(run) },
      });
      for (const name of HIDDEN_GLOBALS) delete compartment.globalThis[name];
      const input = parse(inputJson);
      const env = freeze(parse(envJson));
      const ctx = makeCtx(run, parse(ctxJson));
      promise = invoke(shape, compartment.evaluate(source), input, ctx, env, opts);
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => finish(run, shape, value),
      (error) => fail(run, error),
    );
  }

  function settle(runId, callId, ok, payload) {
    const run = runs.get(runId);
    const waiter = run === undefined ? undefined : run.pending.get(callId);
    if (waiter === undefined) return;
    run.pending.delete(callId);
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
    run.closed = true;
    run.pending.clear();
    runs.delete(runId);
  }

  return freeze({ start, settle, cancel, active: () => runs.size });
})();
