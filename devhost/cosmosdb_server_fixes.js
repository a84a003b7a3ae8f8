// Loaded with `node --require` before the CLI of @vercel/cosmosdb-server (the Cosmos DB emulator the
// tests run against), to close two gaps between that emulator and Cosmos DB. Nothing else changes.
//
// 1. A point read of an item that does not exist, in a container with a partition key, crashes the
//    emulator's handler (TypeError, answered 500); Cosmos DB answers 404. The adapter reads missing
//    items all the time (an unknown batch_id, a new trade record's version entry), so answer 404.
// 2. The emulator closes the connection after every response, so each request pays a new TLS
//    handshake (~40 ms on loopback, ~15x the request itself). Keep connections alive, as Cosmos DB
//    does, for longer than the client keeps an idle connection.
// 3. A replace or upsert inside a transactional batch looks for a partition key in the operation itself,
//    which the SDKs do not send (the batch's request carries it), and answers 500. Take it from the
//    item, as the partition key path of the adapter's containers (/pk) says. What the emulator still does
//    not do: roll back a batch that an operation refused (Cosmos DB writes none of its operations).
"use strict";

const readDocument = require("@vercel/cosmosdb-server/lib/handler/read-document");
const partitionHeader = require("@vercel/cosmosdb-server/lib/utils/get-partition-from-header");

const notFound = {
  code: "NotFound",
  message: "Entity with the specified id does not exist in the system.",
};

const readExisting = readDocument.default;
readDocument.default = (account, req, res, params) => {
  const collection = account.database(params.dbId).collection(params.collId);
  if (collection.read()) {
    let partitionKey;
    try {
      partitionKey = partitionHeader.parsePartitionKey(partitionHeader.default(req), params.docId);
    } catch (error) {
      return readExisting(account, req, res, params);
    }
    if (!collection.document(params.docId, partitionKey).read()) {
      res.statusCode = 404;
      return notFound;
    }
  }
  return readExisting(account, req, res, params);
};

const batchOperations = require("@vercel/cosmosdb-server/lib/handler/_document-operations");
for (const name of ["replaceOperation", "upsertOperation"]) {
  const operation = batchOperations[name];
  batchOperations[name] = (collection, input) => {
    if (input && input.partitionKey === undefined && input.resourceBody && "pk" in input.resourceBody) {
      input.partitionKey = JSON.stringify([input.resourceBody.pk]);
    }
    return operation(collection, input);
  };
}

// Required only now: its route table takes the read handler when it loads.
const server = require("@vercel/cosmosdb-server");

const IDLE_MS = 10 * 60 * 1000;
for (const name of ["createHttpServer", "createHttpsServer"]) {
  const create = server[name];
  server[name] = (options) => {
    const created = create({ keepAlive: true, ...(options || {}) });
    created.keepAliveTimeout = IDLE_MS;
    created.headersTimeout = IDLE_MS + 1000;
    return created;
  };
}
