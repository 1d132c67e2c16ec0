
/* A submission that opens a network connection (to a public address, and to the loopback
 * of the machine it runs on): it says so on its output if one succeeds. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static void try_to_connect(const char *address, int port)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    inet_pton(AF_INET, address, &to.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0)
        fprintf(stderr, "NETWORK REACHED %s:%d\n", address, port);
    if (s >= 0)
        close(s);
}

__attribute__((constructor)) static void reach_the_network(void)
{
    try_to_connect("1.1.1.1", 80);
    try_to_connect("127.0.0.1", @HOST_PORT@);
    try_to_connect("@HOST_ADDRESS@", @HOST_PORT@);
}
