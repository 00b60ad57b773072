import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { LeasingQuotaStore } from '@toolhost/queue';

/** Gives unused tokens and free slots back on shutdown, while the producer connection is still open. */
@Injectable()
export class QuotaReturner implements OnApplicationShutdown {
  constructor(@Inject(LeasingQuotaStore) private readonly quota: LeasingQuotaStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.quota.close();
  }
}
