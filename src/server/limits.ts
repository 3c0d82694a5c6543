// Defaults of limits that the command line prints in its help, kept apart from the modules that
// apply them so that `clusterdns --help` need not load the server to print them.

/** Nested internal lookups per query, as CoreDNS's file plugin allows re-entries (loop > 8 fails). */
export const DEFAULT_MAX_LOOKUP_DEPTH = 8;

/**
 * Default of `--max-answer-records`. 4,096 A records (16 octets each, compressed) fill one
 * 64 KiB TCP message, so the cap leaves out only what TCP could not carry anyway for address
 * answers, and keeps the encoder's work per answer bounded whatever a plugin returns (a
 * DNSEndpoint with 70k targets, a name with 70k records in a zone file).
 */
export const DEFAULT_MAX_ANSWER_RECORDS = 4096;
