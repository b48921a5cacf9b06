/**
 * Path transports: the {@link PathTransport} contract, the simple-peer
 * (browser) adapter, the in-memory fake, ICE candidate tools and
 * duplicate-pair detection. Browser-safe.
 */
export * from './types.js';
export * from './errors.js';
export * from './candidates.js';
export * from './selected-pair.js';
export * from './path-set.js';
export * from './fake.js';
export * from './simple-peer-path.js';
export * from './probe.js';
