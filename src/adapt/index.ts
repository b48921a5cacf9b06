/** Resolution and frame-rate adaptation (I/O-free): see ladder.ts and video-adapter.ts. */
export * from './ladder.js';
export * from './video-adapter.js';
