/** The webhook counters of GET /metrics (the process's; the queue's gauges are read at scrape time). */
import { webhookAttempts } from '../metrics/process.js';

/** Counts one attempt by its outcome. */
export function countDelivery(outcome: 'delivered' | 'retry' | 'failed' | 'gone'): void {
  webhookAttempts.inc([outcome]);
}
