// Loaded with `node --require` into the Cosmos DB emulator (@vercel/cosmosdb-server) by
// bench/azure_accept.py, after devhost/cosmosdb_server_fixes.js: counts every request the emulator
// serves, by operation, status and container, so that a benchmark measures what a service sends
// whatever SDK calls it makes (point operations, queries, transactional batches). Nothing else changes.
//
// GET /_bench/requests answers the counts so far (that request itself is not counted). Operations:
// read (point read of an item), create, replace, upsert, patch, delete (of an item), query, batch (a
// transactional batch: one request; its operations are counted apart, from its answer), read_feed, and
// other (account, database, container and partition-range metadata).
"use strict";

const server = require("@vercel/cosmosdb-server");

const COUNTS_PATH = "/_bench/requests";

const counts = {
  requests: 0,
  by_operation: {},
  by_status: {}, // "operation status"
  by_container: {}, // "container operation"
  batch_operations: 0,
  batch_operations_by_status: {},
};

function add(table, name, amount = 1) {
  table[name] = (table[name] || 0) + amount;
}

function isTrue(req, name) {
  const value = req.headers[name];
  return typeof value === "string" && value.toLowerCase() === "true";
}

// The route the emulator's router would take (lib/router.js), as an operation and its container.
function classify(req) {
  let pathname = (req.url || "").split("?")[0];
  while (pathname.startsWith("//")) pathname = pathname.slice(1);
  while (pathname.length > 1 && pathname.endsWith("/")) pathname = pathname.slice(0, -1);
  const parts = pathname.split("/").filter(Boolean);
  const isDocs = parts.length >= 5 && parts[0] === "dbs" && parts[2] === "colls" && parts[4] === "docs";
  const container = parts.length >= 4 && parts[2] === "colls" ? decodeURIComponent(parts[3]) : "-";
  if (!isDocs) return ["other", container];
  if (parts.length === 6) {
    const byMethod = { GET: "read", PUT: "replace", PATCH: "patch", DELETE: "delete" };
    return [byMethod[req.method] || "other", container];
  }
  if (req.method === "GET") return ["read_feed", container];
  if (req.method !== "POST") return ["other", container];
  if (isTrue(req, "x-ms-documentdb-isquery") || req.headers["content-type"] === "application/query+json") {
    return ["query", container];
  }
  if (isTrue(req, "x-ms-documentdb-is-upsert")) return ["upsert", container];
  if (isTrue(req, "x-ms-cosmos-is-batch-request")) return ["batch", container];
  return ["create", container];
}

function countBatchAnswer(res) {
  const end = res.end;
  res.end = function (chunk, ...rest) {
    try {
      const answer = JSON.parse(chunk);
      if (Array.isArray(answer)) {
        counts.batch_operations += answer.length;
        for (const result of answer) add(counts.batch_operations_by_status, String(result && result.statusCode));
      }
    } catch (error) {
      // not a batch's answer (an error message): its request is counted all the same
    }
    return end.call(this, chunk, ...rest);
  };
}

function count(req, res) {
  const [operation, container] = classify(req);
  counts.requests += 1;
  add(counts.by_operation, operation);
  add(counts.by_container, `${container} ${operation}`);
  if (operation === "batch") countBatchAnswer(res);
  res.on("finish", () => add(counts.by_status, `${operation} ${res.statusCode}`));
}

for (const name of ["createHttpServer", "createHttpsServer"]) {
  const create = server[name];
  server[name] = (options) => {
    const created = create(options);
    const emit = created.emit;
    created.emit = function (event, req, res, ...rest) {
      if (event === "request") {
        if (req.method === "GET" && req.url === COUNTS_PATH) {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(counts));
          return true;
        }
        count(req, res);
      }
      return emit.call(this, event, req, res, ...rest);
    };
    return created;
  };
}
