// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// Validate Kubernetes manifests offline against the API's schemas, unknown
// fields refused (the API server's strict field validation; its OpenAPI
// schemas themselves allow any extra field, so a typo such as
// `mountPropagaton:` would pass them and be dropped silently on apply).
//
//   node validate.mjs MODULES [--configmap-out DIR] FILE...
//
// MODULES: the directory holding node_modules (tests/k8s/package.json,
// installed by `make k8s-test`). Each YAML document of each FILE is
// checked twice, by two libraries generated from the Kubernetes OpenAPI
// spec:
//   - kubernetes-models: its compiled JSON-schema validator (required
//     fields, types, formats, enums);
//   - @kubernetes/client-node: every object's keys against its model's
//     attribute map, recursively: a key the model does not have is an
//     error naming its path.
// A kind neither knows is an error too (never skipped). --configmap-out:
// every ConfigMap's data keys written as files into DIR, for
// `stockade check`. Prints one line per document; exit 0 all valid, 1 not.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const modules = args.shift();
let cmOut = null;
if (args[0] === '--configmap-out') {
	args.shift();
	cmOut = args.shift();
}
if (!modules || !args.length) {
	console.error('usage: node validate.mjs MODULES [--configmap-out DIR] FILE...');
	process.exit(2);
}
const req = createRequire(resolve(modules, 'package.json'));
const YAML = req('yaml');
const models = await import(pathToFileURL(
	req.resolve('@kubernetes/client-node/dist/gen/models/all.js')));

// client-node's names for the leaves of its attribute maps: no model of
// their own, their values are the schema validator's to judge.
const LEAVES = new Set(['string', 'number', 'boolean', 'Date', 'any', 'object', 'IntOrString']);

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The unknown fields of value, a `type` of client-node's, below path.
function unknownFields(value, type, path, errs) {
	let m;

	if (value === null || value === undefined)
		return;
	if ((m = /^Array<(.+)>$/.exec(type))) {
		if (Array.isArray(value))
			value.forEach((v, i) => unknownFields(v, m[1], `${path}[${i}]`, errs));
		return;
	}
	if ((m = /^\{ \[key: string\]: (.+); \}$/.exec(type))) {
		if (isObject(value))
			for (const [k, v] of Object.entries(value))
				unknownFields(v, m[1], `${path}.${k}`, errs);
		return;
	}
	if (LEAVES.has(type))
		return;
	const model = models[type];
	if (!model || typeof model.getAttributeTypeMap !== 'function') {
		// A type this script does not know how to walk: fail, never skip.
		errs.push(`${path}: no model for type '${type}' in @kubernetes/client-node`);
		return;
	}
	if (!isObject(value))
		return;		// the schema check reports the wrong type
	const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
	for (const [k, v] of Object.entries(value)) {
		if (!attrs.has(k))
			errs.push(`${path}.${k}: unknown field ('${type}' has no '${k}')`);
		else
			unknownFields(v, attrs.get(k), `${path}.${k}`, errs);
	}
}

// kubernetes-models' class for apiVersion/kind, or null.
async function modelClass(apiVersion, kind) {
	if (typeof apiVersion !== 'string' || typeof kind !== 'string' ||
	    !/^[A-Za-z0-9]+$/.test(kind))
		return null;
	try {
		const mod = await import(pathToFileURL(
			req.resolve(`kubernetes-models/${apiVersion}/${kind}`)));
		return (mod.default ?? mod)[kind] ?? mod[kind] ?? null;
	} catch {
		return null;
	}
}

// client-node's model name: "apps/v1" + DaemonSet -> V1DaemonSet.
function clientType(apiVersion, kind) {
	const v = apiVersion.split('/').pop();
	return v.charAt(0).toUpperCase() + v.slice(1) + kind;
}

async function checkDoc(obj) {
	const errs = [];

	if (!isObject(obj))
		return ['not a mapping'];
	const { apiVersion, kind } = obj;
	const Cls = await modelClass(apiVersion, kind);
	const type = typeof apiVersion === 'string' && typeof kind === 'string' ?
		clientType(apiVersion, kind) : '';
	if (!Cls || !models[type])
		return [`no schema for apiVersion '${apiVersion}', kind '${kind}'`];
	try {
		new Cls(obj).validate();
	} catch (e) {
		errs.push(...String(e.message ?? e).split('\n').filter((l) => l.trim()));
	}
	unknownFields(obj, type, '', errs);
	return errs;
}

let bad = 0;
for (const file of args) {
	let text;
	try {
		text = readFileSync(file, 'utf8');
	} catch (e) {
		console.log(`FAIL ${file}: cannot read: ${e.message}`);
		bad++;
		continue;
	}
	// Duplicate keys are errors: the API server would keep one silently.
	const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
	let n = 0;
	for (const doc of docs) {
		if (doc.errors.length) {
			console.log(`FAIL ${file}: YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
			bad++;
			continue;
		}
		const obj = doc.toJS();
		if (obj === null || obj === undefined)
			continue;	// an empty document (a trailing ---)
		n++;
		const name = `${obj.kind ?? '?'}/${obj.metadata?.name ?? '?'}`;
		const errs = await checkDoc(obj);
		if (errs.length) {
			bad++;
			console.log(`FAIL ${file}: ${name}`);
			for (const e of errs)
				console.log(`  ${e}`);
			continue;
		}
		console.log(`ok   ${file}: ${name}`);
		if (cmOut && obj.kind === 'ConfigMap')
			for (const [k, v] of Object.entries(obj.data ?? {}))
				writeFileSync(join(cmOut, k), v);
	}
	if (!n && !docs.some((d) => d.errors.length)) {
		console.log(`FAIL ${file}: no Kubernetes object in it`);
		bad++;
	}
}
process.exit(bad ? 1 : 0);
