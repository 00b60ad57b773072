import { Injectable } from '@nestjs/common';

/** Counts requests being served, so a shutdown can wait for the last answers before it closes connections. */
@Injectable()
export class InFlightRequests {
  private count = 0;
  private idle: (() => void)[] = [];

  started(): void {
    this.count += 1;
  }

  finished(): void {
    this.count = Math.max(0, this.count - 1);
    if (this.count === 0) for (const wake of this.idle.splice(0)) wake();
  }

  get size(): number {
    return this.count;
  }

  /** Resolves when no request is in flight, or after `ms` at the latest. */
  async settled(ms: number): Promise<void> {
    if (this.count === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.idle.push(resolve);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
  }
}
