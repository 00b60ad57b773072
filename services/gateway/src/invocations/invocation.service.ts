import {
  ErrorCode,
  InputSchemaError,
  MAX_JSON_DEPTH,
  problemDetails,
  stringifyWithinDepth,
  timeOrderedUuid,
  toolNameOf,
  traceInvocation,
  type InputValidatorCache,
  type Invocation,
  type InvocationAccepted,
  type InvokeRequest,
  type JsonObject,
} from '@toolhost/contracts';
import {
  EnqueueUnconfirmedError,
  type InvocationJobV1,
  type InvocationQueue,
  InvocationSnapshotMapper,
  LOST,
  type QuotaStore,
  type ReplyWaiter,
  quotaRefusal,
} from '@toolhost/queue';
import type { Principal } from '../auth/principal';
import { requireScope } from '../auth/require-scope';
import { GatewayError } from '../errors/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { ResolvedTool, ToolResolver } from '../tools/tool-resolver.service';
import { parseInvokeRequest } from './invoke-request.parser';
import { parseIdempotencyKey, requestFingerprint } from './idempotency-key';
import type { IdempotencyKeys, KeyClaim } from './idempotency-keys';
import type { InvokeOutcome } from './invoke-outcome';

export type { InvokeOutcome } from './invoke-outcome';

/** What a transport passes or asks of one invocation beyond its body. */
export interface InvokeOptions {
  /** The `Idempotency-Key` header (gRPC: `idempotency_key`), as received; checked here. */
  idempotencyKey?: string | undefined;
  /**
   * Called once the job is enqueued (its add confirmed), before the wait for the result: a streaming transport tells
   * its caller the invocation is queued. Not called when the call is refused.
   */
  onQueued?: (accepted: InvocationAccepted) => void;
  /** Ends the wait early: the caller no longer waits. */
  signal?: AbortSignal | undefined;
  /** The HTTP request's id, carried in the job so the worker's lines for this run carry it too. */
  requestId?: string | undefined;
  /** When the transport got the call (`process.hrtime.bigint()`), for the invocation trace; set only while traced. */
  receivedAt?: bigint | undefined;
  /**
   * A dry run (`POST /v1/tools/{id}/test`): needs `tools:write` instead of `invoke`, runs a disabled tool too, and its
   * runs are audited as tests and counted nowhere. No idempotency key.
   */
  test?: boolean;
}

export interface InvocationSettings {
  waitDefaultMs: number;
  waitMaxMs: number;
  maxInputBytes: number;
  /** Whether this gateway hears replies and tool changes now (its pub/sub subscriptions are live). */
  listening?: () => boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const NOT_ENQUEUED = 'the invocation queue is unavailable; nothing was enqueued';
const NOT_LISTENING = 'the gateway is not subscribed to Redis (replies, tool changes) yet; nothing was enqueued';
const UNCONFIRMED =
  'the invocation queue did not confirm the enqueue in time; the invocation may still run: ' +
  'GET /v1/invocations/{id} with details.invocationId tells whether it did';
const LATE =
  'admitting this invocation took longer than its Idempotency-Key claim allows (registry or Redis slow); ' +
  'nothing was enqueued';
const LOST_MESSAGE =
  'the invocation queue lost this invocation after accepting it (Redis restarted without its data or failed over); ' +
  'it may have run, and no record of it is left';

function isRedisDown(error: unknown): boolean {
  return !(error instanceof GatewayError);
}

/**
 * The invocation pipeline, independent of the transport (HTTP today; gRPC and MCP call the same methods):
 * parse → resolve the tool → validate the input → quota → enqueue → wait on this gateway's reply channel.
 * It talks to ports (queue, quota store, reply waiter); only their adapters know Redis. A plain class, which
 * InvocationsModule builds from the ports' tokens: unit specs construct it directly, and jest cannot load Nest's ES
 * modules on Node 20.
 */
export class InvocationService {
  constructor(
    private readonly tools: ToolResolver,
    private readonly validators: InputValidatorCache,
    private readonly quota: QuotaStore,
    private readonly queue: InvocationQueue,
    private readonly replies: ReplyWaiter,
    private readonly metrics: GatewayMetrics,
    private readonly settings: InvocationSettings,
    private readonly idempotency: IdempotencyKeys,
  ) {}

  /**
   * `POST /v1/invocations` (and gRPC's and MCP's invoke): the raw body, parsed here. Throws GatewayError for every
   * refusal; nothing is enqueued when it throws. With an idempotency key, a request the tenant sent before with the
   * same key gets that request's invocation (`replayed`) instead of a new run. `options.signal` ends the wait early
   * (202), as the caller no longer waits (an MCP `notifications/cancelled`, a dropped connection); the run goes on.
   */
  async invoke(principal: Principal, body: unknown, options: InvokeOptions = {}): Promise<InvokeOutcome> {
    try {
      requireScope(principal, options.test ? 'tools:write' : 'invoke');
      const request = parseInvokeRequest(body);
      const key = options.test ? undefined : parseIdempotencyKey(options.idempotencyKey);
      const outcome = await this.run(principal, request, key, options);
      if (outcome.replayed) this.metrics.invocation('replayed');
      else if (outcome.status === 202) this.metrics.invocation('accepted');
      else
        this.metrics.invocation(
          outcome.body.status === 'succeeded' ? 'succeeded' : 'failed',
          outcome.body.error?.code ?? '',
        );
      return outcome;
    } catch (error) {
      this.metrics.invocation('rejected', error instanceof GatewayError ? error.code : ErrorCode.INTERNAL);
      throw error;
    }
  }

  /** `GET /v1/invocations/{id}`: the job record is the durable answer; another tenant's id is NOT_FOUND. */
  async get(principal: Principal, invocationId: string): Promise<Invocation> {
    requireScope(principal, 'invoke');
    if (!UUID.test(invocationId)) throw GatewayError.notFound('invocation');
    const snapshot = await this.readJob(invocationId.toLowerCase());
    if (!snapshot || snapshot.data.tenantId !== principal.tenantId) throw GatewayError.notFound('invocation');
    return InvocationSnapshotMapper.toInvocation(snapshot);
  }

  /**
   * What a resync reads of an invocation this gateway waits for: its invocation once its job has finished, `LOST`
   * when the job is not in Redis, undefined while it is queued or running.
   */
  async finished(invocationId: string): Promise<Invocation | typeof LOST | undefined> {
    return InvocationSnapshotMapper.finishedOf(await this.readJob(invocationId));
  }

  private async run(
    principal: Principal,
    request: InvokeRequest,
    key: string | undefined,
    options: InvokeOptions,
  ): Promise<InvokeOutcome> {
    // Before the tool cache is read: until the subscriber has resynchronised, it may hold tools changed meanwhile.
    if (this.settings.listening && !this.settings.listening()) throw GatewayError.unavailable(NOT_LISTENING);
    const inputJson = stringifyWithinDepth(request.input);
    if (inputJson === undefined) {
      throw GatewayError.badRequest(`input is nested deeper than ${MAX_JSON_DEPTH} levels`, {
        ...problemDetails([{ path: '/input', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]),
        limitDepth: MAX_JSON_DEPTH,
      });
    }
    const inputBytes = Buffer.byteLength(inputJson, 'utf8');
    if (inputBytes > this.settings.maxInputBytes) {
      throw GatewayError.payloadTooLarge(`input is ${inputBytes} bytes; the limit is ${this.settings.maxInputBytes}`, {
        ...problemDetails([{ path: '/input', message: `is ${inputBytes} bytes, over the limit` }]),
        limitBytes: this.settings.maxInputBytes,
        receivedBytes: inputBytes,
      });
    }
    // Time-ordered: the invocation log's primary key takes each row at its end (time-ordered-uuid.ts).
    const invocationId = timeOrderedUuid();
    traceInvocation('gateway.received', invocationId, options.receivedAt);
    const waitMs =
      request.wait === false ? 0 : Math.min(request.timeoutMs ?? this.settings.waitDefaultMs, this.settings.waitMaxMs);
    let claim: KeyClaim | undefined;
    if (key !== undefined) {
      // Before the tool is read: a retry gets its invocation even when the tool changed or was disabled since.
      const held = await this.idempotency.claimOrReplay(
        principal.tenantId,
        key,
        requestFingerprint(request),
        invocationId,
        waitMs,
      );
      if ('replay' in held) return held.replay;
      claim = held.claim;
    }
    let tool: ResolvedTool;
    try {
      tool = await this.admit(principal, request, invocationId, claim, options.test === true);
    } catch (error) {
      // Refused before the enqueue: the key is free again for a retry.
      if (claim) await this.idempotency.release(claim);
      throw error;
    }
    const release = (): void => this.quota.release(principal.tenantId, invocationId);
    const pending = this.replies.expect(invocationId, release);
    const job: InvocationJobV1 = {
      v: 1,
      invocationId,
      tenantId: principal.tenantId,
      toolId: tool.toolId,
      version: tool.version,
      input: request.input,
      context: request.context ?? {},
      ...(this.replies.replyTo === undefined ? {} : { replyTo: this.replies.replyTo }),
      ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
      enqueuedAt: Date.now(),
      ...(options.test ? { test: true as const } : {}),
    };
    // Sent before the add and on its connection (not awaited in between), so the key is recorded before the job.
    const committed = claim ? this.idempotency.commit(claim) : undefined;
    traceInvocation('gateway.enqueue', invocationId);
    try {
      await this.queue.enqueue(job, this.quota.backlogOf(principal.tenantId));
      traceInvocation('gateway.enqueued', invocationId);
    } catch (error) {
      if (error instanceof EnqueueUnconfirmedError) {
        // Sent, and neither confirmed nor refuted (Redis stalled or the connection died with the add on it): the one
        // 503 that cannot say "nothing was enqueued". It names the id, so a client polls instead of re-invoking and
        // running the tool twice; the slot stays held until the job's reply frees it or the sweep reclaims it. The
        // key stays too: a retry with it follows the job if it lands.
        pending.detach();
        throw GatewayError.unavailable(UNCONFIRMED, { invocationId, enqueued: 'unknown' });
      }
      pending.cancel();
      release();
      if (claim) await this.idempotency.release(claim);
      if (isRedisDown(error)) throw GatewayError.unavailable(NOT_ENQUEUED);
      throw error;
    }
    await committed;

    pending.enqueued();
    const accepted: InvokeOutcome = { status: 202, body: { id: invocationId, status: 'queued' } };
    options.onQueued?.(accepted.body);
    if (request.wait === false) {
      pending.detach();
      return accepted;
    }
    const finished = await pending.result(waitMs, options.signal);
    if (finished === LOST) throw this.lost(invocationId);
    if (finished) {
      traceInvocation('gateway.respond', invocationId);
      return { status: 200, body: finished };
    }
    // Nobody reads the answer of a cancelled wait: no job read for it.
    if (options.signal?.aborted) return accepted;
    // A reply can be lost across a subscriber reconnect: the job record settles it once before answering 202.
    let late: Invocation | typeof LOST | undefined;
    try {
      late = await this.finished(invocationId);
    } catch {
      // Redis is away: the record cannot be read now, and 202 lets the caller poll once it is back.
      return accepted;
    }
    if (!late) return accepted;
    // Its reply may never come (that is why it was read): the slot is free, and nobody waits for it.
    release();
    pending.cancel();
    if (late === LOST) throw this.lost(invocationId);
    return { status: 200, body: late };
  }

  /**
   * Resolves the tool, validates the input and takes the tenant's quota: every refusal before the enqueue. A request
   * holding an idempotency key that took too long here gives up, so that its claim cannot lapse under its enqueue.
   */
  private async admit(
    principal: Principal,
    request: InvokeRequest,
    invocationId: string,
    claim: KeyClaim | undefined,
    test: boolean,
  ): Promise<ResolvedTool> {
    // A disabled tool can be tried: a dry run is how its owner sees that a fix works before enabling it.
    const tool = await this.tools.resolve(principal.tenantId, request.tool, { allowDisabled: test });
    this.validate(tool.toolId, tool.version, tool.inputSchema, request);
    const decision = await this.guardRedis(() => this.quota.acquire(principal.tenantId, invocationId), NOT_ENQUEUED);
    if (!decision.admitted) {
      this.metrics.limited(decision.reason);
      throw GatewayError.rateLimited(quotaRefusal(decision.reason), decision.retryAfterMs);
    }
    if (claim && !this.idempotency.mayEnqueue(claim)) {
      this.quota.release(principal.tenantId, invocationId);
      throw GatewayError.unavailable(LATE);
    }
    return tool;
  }

  /**
   * Confirmed enqueued and now without a record: Redis lost it (a restart without persistence, a failover that
   * dropped recent writes). A 202 would send the caller to poll an id that can only answer 404.
   */
  private lost(invocationId: string): GatewayError {
    this.metrics.lost();
    return GatewayError.unavailable(LOST_MESSAGE, { invocationId, enqueued: 'lost' });
  }

  private validate(toolId: string, version: number, schema: JsonObject, request: InvokeRequest): void {
    let check;
    try {
      check = this.validators.check(toolId, version, schema, request.input);
    } catch (error) {
      if (error instanceof InputSchemaError) {
        throw new GatewayError(ErrorCode.INTERNAL, "the tool's input schema cannot be used; fix it in the registry");
      }
      throw error;
    }
    if (check.ok) return;
    throw new GatewayError(
      ErrorCode.VALIDATION_FAILED,
      `input does not match the schema of ${toolNameOf(toolId)}: ${check.problems
        .map((p) => `${p.path} ${p.message}`)
        .join('; ')}`,
      problemDetails(check.problems, request.input),
    );
  }

  private async readJob(invocationId: string): ReturnType<InvocationQueue['read']> {
    return this.guardRedis(() => this.queue.read(invocationId), 'the invocation store is unavailable');
  }

  /** Any failure of a Redis round trip (down, no answer in time) is 503 UNAVAILABLE. */
  private async guardRedis<T>(operation: () => Promise<T>, message: string): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (isRedisDown(error)) throw GatewayError.unavailable(message);
      throw error;
    }
  }
}
