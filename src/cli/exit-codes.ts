// Exit codes of `clusterdns check`, apart from the check itself so that the command line can
// register the command (its usage errors exit EXIT_USAGE) without loading it.
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;
