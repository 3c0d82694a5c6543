// Records as the chain and the plugins see them: dns-packet's shapes, with names written
// fully qualified (trailing dot) inside clusterdns and converted only at the wire boundary.
import type { Answer } from 'dns-packet';

export type Rr = Answer;

export { Rcode } from '../pkg/rcode.js';
