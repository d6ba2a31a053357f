/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A minimal JSON-lines writer for the event stream.
 *
 * Why not json-c: the logger must keep up with ~1M records/s, and json-c
 * builds a heap object tree per record; it also passes invalid UTF-8
 * through unchanged, which makes the line invalid JSON. This writer appends
 * straight into one reusable buffer and guarantees valid JSON: quotes,
 * backslashes and control characters are escaped, and each byte that is
 * not part of valid UTF-8 becomes U+FFFD. Because that loses information,
 * json_str() reports it, and the caller adds the raw bytes as hex in a
 * `<field>_hex` sibling so an assessor can still see exactly what was there.
 */
#ifndef STOCKADE_JSON_H
#define STOCKADE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json {
	char *buf;
	size_t len, cap;
	bool first;	/* no member written yet in the current object */
	bool oom;	/* an allocation failed: the line is incomplete */
};

void json_init(struct json *j);
void json_free(struct json *j);
/* Start a new object, dropping whatever the buffer held. */
void json_begin(struct json *j);
/* Close the object and append '\n'. */
void json_end(struct json *j);

/* Members. json_str* return true when the value had invalid UTF-8. */
bool json_str(struct json *j, const char *key, const char *s);
bool json_strn(struct json *j, const char *key, const char *s, size_t n);
/* A string member, plus `<key>_hex` when it was not valid UTF-8. */
void json_str_raw(struct json *j, const char *key, const char *s, size_t n);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, bool v);
/* Literal JSON (already valid), e.g. an array built by the caller. */
void json_raw(struct json *j, const char *key, const char *literal);
/* An array of strings. */
void json_str_array(struct json *j, const char *key, const char *const *v,
		    size_t n);

/* Length (1..4) of the valid UTF-8 sequence at s, or 0 if the bytes there
 * are not one (overlong, surrogate, above U+10FFFF: RFC 3629). */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Escape s[0..n) into out as a JSON string body (no quotes). */
bool json_escape(struct json *out, const char *s, size_t n);

#endif
