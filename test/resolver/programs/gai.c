/*
 * musl client of the differential resolver test (test/resolver/differential.test.ts).
 * Built static with musl-gcc, so the lookup is musl's own getaddrinfo (src/network/lookup_name.c),
 * reading /etc/resolv.conf and /etc/hosts of the mount namespace it runs in.
 *
 *   gai-musl [-4] NAME
 *
 * AF_UNSPEC (A and AAAA per candidate), or AF_INET with -4 (A only). Prints one line:
 *   OK ADDR...          every address, in the order getaddrinfo returned them
 *   ERR EAI_XXX NUMBER  the getaddrinfo error
 * Exit status 0 on success, 2 on a lookup error, 1 on a usage error.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *eai_name(int rc) {
	switch (rc) {
	case EAI_BADFLAGS: return "EAI_BADFLAGS";
	case EAI_NONAME: return "EAI_NONAME";
	case EAI_AGAIN: return "EAI_AGAIN";
	case EAI_FAIL: return "EAI_FAIL";
	case EAI_FAMILY: return "EAI_FAMILY";
	case EAI_SOCKTYPE: return "EAI_SOCKTYPE";
	case EAI_SERVICE: return "EAI_SERVICE";
	case EAI_MEMORY: return "EAI_MEMORY";
	case EAI_SYSTEM: return "EAI_SYSTEM";
	case EAI_OVERFLOW: return "EAI_OVERFLOW";
#ifdef EAI_NODATA
	case EAI_NODATA: return "EAI_NODATA";
#endif
	default: return "EAI_UNKNOWN";
	}
}

int main(int argc, char **argv) {
	int family = AF_UNSPEC;
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "-4") == 0) {
		family = AF_INET;
		i = 2;
	}
	if (argc != i + 1) {
		fprintf(stderr, "usage: %s [-4] NAME\n", argv[0]);
		return 1;
	}
	struct addrinfo hints;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM; /* one entry per address */
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(argv[i], NULL, &hints, &res);
	if (rc != 0) {
		printf("ERR %s %d\n", eai_name(rc), rc);
		return 2;
	}
	printf("OK");
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char buf[INET6_ADDRSTRLEN];
		const void *addr = ai->ai_family == AF_INET6
			? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
			: (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		if (inet_ntop(ai->ai_family, addr, buf, sizeof buf)) printf(" %s", buf);
	}
	printf("\n");
	freeaddrinfo(res);
	return 0;
}
