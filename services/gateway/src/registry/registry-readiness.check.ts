import { Inject, Injectable } from '@nestjs/common';
import type { ReadinessCheck } from '@toolhost/observability';
import { REGISTRY_CLIENT } from '../gateway.tokens';
import type { RegistryClient } from './registry.client';

/**
 * Until the registry has answered once, the gateway knows no key or tool and could only answer 503. After that an
 * outage of the registry does not make it unready: it serves the keys and tools it holds (REGISTRY_STALE_MS), where
 * a probe failing with the registry pulled every gateway out of rotation at once.
 */
@Injectable()
export class RegistryReadinessCheck implements ReadinessCheck {
  readonly name = 'registry';
  private answered = false;

  constructor(@Inject(REGISTRY_CLIENT) private readonly registry: RegistryClient) {}

  async check(): Promise<void> {
    if (this.answered) return;
    await this.registry.ping();
    this.answered = true;
  }
}
