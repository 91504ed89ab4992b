/*
 * refresh_chains: the load generator for scenario (c), POST /api/v1/auth/refresh with rotation.
 *
 *   refresh_chains HOST PORT CONNECTIONS SECONDS TOKENS_FILE
 *
 * Keeps CONNECTIONS keep-alive connections busy for SECONDS. Each request takes a refresh token
 * from a ring of the file's tokens (one per line), and the answer's new refresh token goes back into
 * the ring, so every token in the file starts a chain that rotates for the whole run. A failed
 * rotation (any status but 200, or an answer without a token) counts as an error and puts the token
 * the connection sent back in the ring; so does a connection the server closes before answering,
 * which a new connection then replaces. Prints one JSON object: requests, seconds, errors, p50/p99/
 * p99.9 latency in ms (time from writing the request to reading the whole answer).
 *
 * Why not wrk with a Lua script: the load generator shares this machine's two cores with the
 * server, and wrk's per-response Lua callback (a table of the headers, the body as a Lua string) and
 * its epoll round trip before each write cost about twice what wrk costs per request for GET
 * /health, so the server got less of the machine in (c) than in (a). This does the least a chained
 * request needs: one write and one read per request on a single thread.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { BUFFER = 16384, TOKEN_MAX = 512 };

struct connection {
    int fd;
    char token[TOKEN_MAX];   /* the token this connection sent, until its answer arrives */
    size_t token_length;
    char in[BUFFER];
    size_t have;             /* bytes of the answer read so far */
    double sent;             /* when the request was written */
};

static char **ring;          /* tokens ready to send: ring[head % n], ..., ring[(tail - 1) % n] */
static size_t ring_size, head, tail;
static double *latencies;
static size_t latency_count, latency_capacity;
static unsigned long long requests, errors;
static struct sockaddr_in address;
static int epoll_fd;
static double stop;           /* when the run ends */
static char request_prefix[256];
static int request_prefix_length;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "refresh_chains: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void put_token(const char *token, size_t length) {
    char *copy = ring[tail % ring_size];
    memcpy(copy, token, length);
    copy[length] = 0;
    tail++;
}

static int open_connection(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("connect");
    return fd;
}

/* Writes the next request on `c`, taking a token from the ring; -1 if the connection refused it. */
static int send_request(struct connection *c) {
    if (head == tail) { fprintf(stderr, "refresh_chains: more connections than tokens\n"); exit(1); }
    const char *token = ring[head % ring_size];
    head++;
    c->token_length = strlen(token);
    memcpy(c->token, token, c->token_length + 1);
    char request[1024];
    int body = (int)c->token_length + 20;  /* {"refresh_token":"…"} */
    int length = snprintf(request, sizeof request, "%.*s%d\r\n\r\n{\"refresh_token\":\"%s\"}", request_prefix_length,
                          request_prefix, body, c->token);
    c->have = 0;
    c->sent = now();
    for (int off = 0; off < length;) {
        /* A blocking socket: a short write only continues. MSG_NOSIGNAL: a connection the server
           closed answers EPIPE instead of killing this process with SIGPIPE. */
        ssize_t w = send(c->fd, request + off, length - off, MSG_NOSIGNAL);
        if (w < 0) return -1;
        off += (int)w;
    }
    return 0;
}

/* `c`'s connection failed (closed by the server, or a request refused): an error. The token it
   sent goes back in the ring, since its answer never came. */
static void drop(struct connection *c) {
    errors++;
    put_token(c->token, c->token_length);
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

/* Opens a connection for `c` and writes its next request; a new connection that refuses it is
   dropped too, and another tried until the run ends. */
static void start(struct connection *c) {
    while (now() < stop) {
        c->fd = open_connection();
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &e) < 0) fail("epoll_ctl");
        if (send_request(c) == 0) return;
        drop(c);
    }
}

/* The answer's length if `c->in` holds a whole one, 0 if more is to come; sets *status. */
static size_t complete_answer(struct connection *c, int *status) {
    char *end = memmem(c->in, c->have, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t header = end + 4 - c->in;
    *status = atoi(c->in + 9);  /* "HTTP/1.1 200 OK" */
    long body = -1;
    for (char *line = memchr(c->in, '\n', header); line && line < end; line = memchr(line + 1, '\n', end - line)) {
        if (strncasecmp(line + 1, "content-length:", 15) == 0) body = strtol(line + 16, NULL, 10);
    }
    if (body < 0) { fprintf(stderr, "refresh_chains: an answer without Content-Length\n"); exit(1); }
    return c->have >= header + (size_t)body ? header + (size_t)body : 0;
}

static void record(double latency) {
    if (latency_count == latency_capacity) {
        latency_capacity = latency_capacity ? latency_capacity * 2 : 65536;
        latencies = realloc(latencies, latency_capacity * sizeof *latencies);
        if (!latencies) fail("realloc");
    }
    latencies[latency_count++] = latency;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double p) {
    if (!latency_count) return 0;
    size_t i = (size_t)(p / 100 * (latency_count - 1) + 0.5);
    return latencies[i] * 1000;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: refresh_chains HOST PORT CONNECTIONS SECONDS TOKENS_FILE\n");
        return 2;
    }
    int connections = atoi(argv[3]);
    double seconds = atof(argv[4]);
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1) { fprintf(stderr, "refresh_chains: bad host\n"); return 2; }
    request_prefix_length = snprintf(request_prefix, sizeof request_prefix,
                                     "POST /api/v1/auth/refresh HTTP/1.1\r\nHost: %s:%s\r\n"
                                     "Content-Type: application/json\r\nContent-Length: ", argv[1], argv[2]);

    FILE *f = fopen(argv[5], "r");
    if (!f) fail(argv[5]);
    char line[TOKEN_MAX];
    size_t count = 0, capacity = 1024;
    char **tokens = malloc(capacity * sizeof *tokens);
    while (fgets(line, sizeof line, f)) {
        size_t length = strcspn(line, "\r\n");
        if (!length) continue;
        if (count == capacity) tokens = realloc(tokens, (capacity *= 2) * sizeof *tokens);
        tokens[count] = malloc(TOKEN_MAX);
        memcpy(tokens[count], line, length);
        tokens[count][length] = 0;
        count++;
    }
    fclose(f);
    ring = tokens;
    ring_size = count;
    tail = count;
    if ((size_t)connections > count || connections < 1) { fprintf(stderr, "refresh_chains: need 1 to %zu connections\n", count); return 2; }

    epoll_fd = epoll_create1(0);
    if (epoll_fd < 0) fail("epoll_create1");
    struct connection *cs = calloc(connections, sizeof *cs);
    double begun = now();
    stop = begun + seconds;
    for (int i = 0; i < connections; i++) start(&cs[i]);

    struct epoll_event events[256];
    for (;;) {
        double t = now();
        if (t >= stop) break;
        int ready = epoll_wait(epoll_fd, events, 256, (int)((stop - t) * 1000) + 1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        for (int i = 0; i < ready; i++) {
            struct connection *c = events[i].data.ptr;
            ssize_t r = read(c->fd, c->in + c->have, BUFFER - c->have);
            if (r <= 0) {  /* the server closed the connection */
                drop(c);
                start(c);
                continue;
            }
            c->have += (size_t)r;
            int status = 0;
            size_t length = complete_answer(c, &status);
            if (!length) {
                if (c->have == BUFFER) { fprintf(stderr, "refresh_chains: an answer over %d bytes\n", BUFFER); return 1; }
                continue;
            }
            if (length != c->have) { fprintf(stderr, "refresh_chains: bytes after an answer\n"); return 1; }
            double done = now();
            if (done > stop) goto finished;  /* answers after the end are not counted, like wrk's */
            requests++;
            record(done - c->sent);
            const char *key = "\"refresh_token\":\"";
            char *found = status == 200 ? memmem(c->in, length, key, strlen(key)) : NULL;
            char *value = found ? found + strlen(key) : NULL;
            char *close_quote = value ? memchr(value, '"', c->in + length - value) : NULL;
            if (close_quote && close_quote - value < TOKEN_MAX) {
                put_token(value, (size_t)(close_quote - value));
            } else {
                errors++;
                put_token(c->token, c->token_length);
            }
            if (send_request(c) < 0) {
                drop(c);
                start(c);
            }
        }
    }
finished:;
    double elapsed = now() - begun;
    qsort(latencies, latency_count, sizeof *latencies, by_value);
    printf("{\"requests\": %llu, \"seconds\": %.4f, \"rps\": %.2f, \"errors\": %llu, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
           "\"p999_ms\": %.3f, \"connections\": %d, \"chains\": %zu}\n",
           requests, elapsed, requests / elapsed, errors, percentile(50), percentile(99), percentile(99.9), connections, count);
    return 0;
}
