// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* `stockade report`'s pure half (agent/report.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha1.h>
#include <nettle/sha2.h>

#include "json.h"
#include "report.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool report_uuid5(const char *ns, const char *name, char out[REPORT_UUID_LEN])
{
	uint8_t b[16], d[SHA1_DIGEST_SIZE];
	struct sha1_ctx ctx;
	size_t i = 0;
	const char *p;

	for (p = ns; *p && i < 16; p++) {
		int hi, lo;

		if (*p == '-')
			continue;
		hi = hexval(p[0]);
		lo = p[1] ? hexval(p[1]) : -1;
		if (hi < 0 || lo < 0)
			return false;
		b[i++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	if (i != 16 || *p)
		return false;
	sha1_init(&ctx);
	sha1_update(&ctx, 16, b);
	sha1_update(&ctx, strlen(name), (const uint8_t *)name);
	sha1_digest(&ctx, sizeof(d), d);
	d[6] = (uint8_t)((d[6] & 0x0f) | 0x50);	/* version 5 */
	d[8] = (uint8_t)((d[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	snprintf(out, REPORT_UUID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9],
		 d[10], d[11], d[12], d[13], d[14], d[15]);
	return true;
}

int report_sha256_file(const char *path, char out[65])
{
	uint8_t buf[65536], d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;
	ssize_t r;

	if (fd < 0)
		return -errno;
	sha256_init(&ctx);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&ctx, (size_t)r, buf);
	i = errno;
	close(fd);
	if (r < 0)
		return -i;
	sha256_digest(&ctx, sizeof(d), d);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	return 0;
}

/* ---- OSCAL --------------------------------------------------------------- */

/* A JSON string value (json.c's escaping) between a key and what follows. */
static void jstr(FILE *f, const char *key, const char *v, bool comma)
{
	struct json j;

	json_init(&j);
	json_begin(&j);
	json_str(&j, "k", v ? v : "");
	/* j.buf is {"k":"...": the value's text is after the colon. */
	fprintf(f, "%s\"%s\":%.*s", comma ? "," : "", key,
		(int)(j.len >= 5 ? j.len - 5 : 0), j.buf + 5);
	json_free(&j);
}

static void uuid_of(const struct report_doc *d, const char *what, char out[REPORT_UUID_LEN])
{
	char name[512];

	snprintf(name, sizeof(name), "%s/%s/%s", d->node, d->run, what);
	report_uuid5(REPORT_UUID_NS, name, out);
}

void report_oscal(FILE *f, const struct report_doc *d)
{
	char u[REPORT_UUID_LEN], name[192];
	size_t i, k;

	fputs("{\"assessment-results\":{", f);
	uuid_of(d, "assessment-results", u);
	jstr(f, "uuid", u, false);
	fputs(",\"metadata\":{", f);
	jstr(f, "title", "APP-016 Sandboxed Execution of Untrusted Code: stockade assessment results", false);
	jstr(f, "last-modified", d->generated, true);
	jstr(f, "version", d->run, true);
	jstr(f, "oscal-version", "1.1.2", true);
	fputs("},\"import-ap\":{", f);
	/* No assessment plan document exists: the plan is the control's own
	 * tests, kept as a resource of this document. */
	uuid_of(d, "resource/plan", u);
	snprintf(name, sizeof(name), "#%s", u);
	jstr(f, "href", name, false);
	fputs("},\"results\":[{", f);
	uuid_of(d, "result", u);
	jstr(f, "uuid", u, false);
	jstr(f, "title", "stockade report", true);
	jstr(f, "description", "The runtime configuration, the live escape test and the code register check of this node, run by stockade.", true);
	jstr(f, "start", d->start, true);
	jstr(f, "end", d->end, true);
	fputs(",\"reviewed-controls\":{\"control-selections\":[{\"include-controls\":[{", f);
	jstr(f, "control-id", "app-016", false);
	fputs("}]}]}", f);
	if (d->n_obs) {
		fputs(",\"observations\":[", f);
		for (i = 0; i < d->n_obs; i++) {
			snprintf(name, sizeof(name), "observation/%zu", i);
			uuid_of(d, name, u);
			fputs(i ? ",{" : "{", f);
			jstr(f, "uuid", u, false);
			jstr(f, "title", d->obs[i].title, true);
			jstr(f, "description", d->obs[i].description, true);
			fprintf(f, ",\"methods\":[\"%s\"]", d->obs[i].test ? "TEST" : "EXAMINE");
			jstr(f, "collected", d->end, true);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputs(",\"findings\":[", f);
	for (i = 0; i < d->n_pt; i++) {
		bool any = false;

		snprintf(name, sizeof(name), "finding/%s", d->pt[i].id);
		uuid_of(d, name, u);
		fputs(i ? ",{" : "{", f);
		jstr(f, "uuid", u, false);
		jstr(f, "title", d->pt[i].title, true);
		jstr(f, "description", d->pt[i].why[0] ? d->pt[i].why :
		     d->pt[i].pass ? "Every item bearing on this point passed." :
		     "Not shown.", true);
		fputs(",\"target\":{\"type\":\"objective-id\"", f);
		snprintf(name, sizeof(name), "app-016_obj.%s", d->pt[i].id);
		jstr(f, "target-id", name, true);
		fputs(",\"status\":{", f);
		jstr(f, "state", d->pt[i].pass && d->pt[i].shown ? "satisfied" : "not-satisfied", false);
		fputs("}}", f);
		for (k = 0; k < d->n_obs; k++) {
			char ou[REPORT_UUID_LEN], on[48];

			if (!d->obs[k].point || strcmp(d->obs[k].point, d->pt[i].id))
				continue;
			snprintf(on, sizeof(on), "observation/%zu", k);
			uuid_of(d, on, ou);
			fputs(any ? "," : ",\"related-observations\":[", f);
			fputc('{', f);
			jstr(f, "observation-uuid", ou, false);
			fputc('}', f);
			any = true;
		}
		if (any)
			fputc(']', f);
		fputc('}', f);
	}
	fputs("]}]", f);
	fputs(",\"back-matter\":{\"resources\":[{", f);
	uuid_of(d, "resource/plan", u);
	jstr(f, "uuid", u, false);
	jstr(f, "title", "APP-016 evidence tests (the assessment plan)", true);
	jstr(f, "description", "Runtime configuration: verification points 1-5; live test of the confinement: points 1-5; register of permitted external code: points 1-4.", true);
	fputc('}', f);
	for (i = 0; i < d->n_res; i++) {
		snprintf(name, sizeof(name), "resource/%s", d->res[i].href);
		uuid_of(d, name, u);
		fputs(",{", f);
		jstr(f, "uuid", u, false);
		jstr(f, "title", d->res[i].title, true);
		fputs(",\"rlinks\":[{", f);
		jstr(f, "href", d->res[i].href, false);
		fputs(",\"hashes\":[{\"algorithm\":\"SHA-256\"", f);
		jstr(f, "value", d->res[i].sha256, true);
		fputs("}]}]}", f);
	}
	fputs("]}}}\n", f);
}
