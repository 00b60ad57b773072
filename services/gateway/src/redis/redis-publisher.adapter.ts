import type Redis from 'ioredis';

/**
 * Publishes on one Redis channel through the producer connection (no offline queue: with Redis away a publish fails
 * at once rather than going out late). MCP cancellations reach the other gateways through it.
 */
export class RedisPublisher {
  constructor(
    private readonly producer: Redis,
    private readonly channel: string,
  ) {}

  async publish(message: string): Promise<void> {
    await this.producer.publish(this.channel, message);
  }
}
