/**
 * `npm run bench`: cost, speed and timing benchmarks on a fresh embedded stack.
 * The measurements arrive with the benchmark issue; until then this says so.
 */
console.log(
  'ackline bench: not yet — the benchmarks (cost per message, throughput, redelivery timing, ack holes, admin acknowledgeMessage latency) come with the benchmark issue.',
);
