/*
 * Sends a UDP datagram with a chosen source port, including 0, which no ordinary socket can
 * send from (binding port 0 picks an ephemeral port): a raw IPPROTO_UDP socket, the UDP header
 * written here, the IP header by the kernel. Needs CAP_NET_RAW.
 *
 *   udp-from-port SRC_PORT DST_IPV4 DST_PORT COUNT PAYLOAD_HEX
 *
 * The checksum is left 0 ("none", allowed over IPv4 by RFC 768).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s SRC_PORT DST_IPV4 DST_PORT COUNT PAYLOAD_HEX\n", argv[0]);
    return 2;
  }
  unsigned char pkt[1500];
  size_t hexlen = strlen(argv[5]);
  size_t n = hexlen / 2;
  if (hexlen % 2 != 0 || n + 8 > sizeof pkt) {
    fprintf(stderr, "payload must be an even number of hex digits, at most %zu bytes\n", sizeof pkt - 8);
    return 2;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned int b;
    if (sscanf(argv[5] + 2 * i, "%2x", &b) != 1) return 2;
    pkt[8 + i] = (unsigned char)b;
  }
  unsigned short src = htons((unsigned short)atoi(argv[1]));
  unsigned short dst = htons((unsigned short)atoi(argv[3]));
  unsigned short len = htons((unsigned short)(n + 8));
  memcpy(pkt, &src, 2);
  memcpy(pkt + 2, &dst, 2);
  memcpy(pkt + 4, &len, 2);
  memset(pkt + 6, 0, 2);
  int s = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
  if (s < 0) {
    perror("socket(AF_INET, SOCK_RAW, IPPROTO_UDP)");
    return 1;
  }
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  if (inet_pton(AF_INET, argv[2], &to.sin_addr) != 1) return 2;
  int count = atoi(argv[4]);
  for (int i = 0; i < count; i++) {
    if (sendto(s, pkt, n + 8, 0, (struct sockaddr *)&to, sizeof to) < 0) {
      perror("sendto");
      return 1;
    }
  }
  close(s);
  return 0;
}
