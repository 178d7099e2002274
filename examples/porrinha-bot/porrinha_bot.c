/*
 * A Porrinha player for matchlog, in C: it speaks docs/protocol.md on stdin and stdout.
 *
 *     make && matchlog play porrinha -p random -p bot=cmd:"./porrinha-bot --seed 7"
 *
 * Each line it reads is one call: {"call": "hand" | "guess" | "begin_game" | "end_round" |
 * "end_game", "table": {...}}. It answers every line with one line: a number for hand and guess,
 * null for the rest. It holds a random hand, and guesses its own hand plus half of everyone else's
 * chopsticks (the nearest total nobody has said yet). The JSON reading is the least that works for
 * matchlog's messages (numbers and arrays of numbers by key), not a general parser.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PLAYERS 256

/* The text right after "key": in line, or NULL. */
static const char *after_key(const char *line, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *found = strstr(line, pattern);
    return found ? found + strlen(pattern) : NULL;
}

/* The integer under key (missing or null: fallback). */
static long number(const char *line, const char *key, long fallback) {
    const char *at = after_key(line, key);
    if (!at || strncmp(at, "null", 4) == 0) return fallback;
    return strtol(at, NULL, 10);
}

/* The array of integers under key, into out; returns how many. */
static int numbers(const char *line, const char *key, long *out, int most) {
    const char *at = after_key(line, key);
    int count = 0;
    if (!at || *at != '[') return 0;
    at++;
    while (*at && *at != ']' && count < most) {
        char *end;
        out[count++] = strtol(at, &end, 10);
        at = end;
        while (*at == ',' || *at == ' ') at++;
    }
    return count;
}

static int said(const long *guesses, int players, long total) {
    for (int i = 0; i < players; i++)
        if (guesses[i] == total) return 1;
    return 0;
}

int main(int argc, char **argv) {
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0) seed = (unsigned)strtoul(argv[i + 1], NULL, 10);
    srand(seed);

    char *line = NULL;
    size_t size = 0;
    long chopsticks[MAX_PLAYERS], guesses[MAX_PLAYERS];
    while (getline(&line, &size, stdin) != -1) {
        const char *call = after_key(line, "call");
        long me = number(line, "index", 0);
        int players = numbers(line, "chopsticks", chopsticks, MAX_PLAYERS);
        long mine = me >= 0 && me < players ? chopsticks[me] : 0;
        if (call && strncmp(call, "\"hand\"", 6) == 0) {
            printf("%ld\n", mine ? rand() % (mine + 1) : 0);
        } else if (call && strncmp(call, "\"guess\"", 7) == 0) {
            long total = number(line, "chopstick_count", 0);
            long target = number(line, "my_hand", 0) + (total - mine) / 2;
            int count = numbers(line, "guesses", guesses, MAX_PLAYERS);
            long answer = target;
            for (long distance = 0; distance <= total; distance++) {
                if (target - distance >= 0 && !said(guesses, count, target - distance)) {
                    answer = target - distance;
                    break;
                }
                if (target + distance <= total && !said(guesses, count, target + distance)) {
                    answer = target + distance;
                    break;
                }
            }
            printf("%ld\n", answer);
        } else {
            printf("null\n");
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
