/** Node entry point: the signalling server (`ws`). */
export { startSignallingServer } from '../signalling/node.js';
