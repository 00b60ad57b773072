import { Injectable } from '@nestjs/common';

/**
 * Set when the process starts draining: readiness answers 503 so load balancers stop sending work,
 * while liveness stays green until in-flight work is done.
 */
@Injectable()
export class ShutdownState {
  private draining = false;

  startDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }
}
