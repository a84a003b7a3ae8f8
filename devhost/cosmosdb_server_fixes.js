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
//    item, as the partition key path of the adapter's containers (/pk) says.
// 4. A query sent with a partition key (x-ms-documentdb-partitionkey) reads that logical partition only, as
//    in Cosmos DB; the emulator evaluated it over every item of the container, so a store-day's query
//    slowed with every other store-day written (235 ms at 6,000 records). Cross-partition queries still
//    read every item: the emulator has no index.
// 5. A transactional batch that an operation refuses is rolled back, as in Cosmos DB: the emulator kept the
//    operations before the refused one. Its operations take the batch's partition key (a delete has no item
//    to take it from). A store-day's sums item is written in the same batch as the records
//    it sums (decision 0108), so a half-applied batch would leave it wrong.
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

const PARTITION = Symbol("partition key of a query");
const jsonBody = require("@vercel/cosmosdb-server/lib/json");
const parseBody = jsonBody.default;
jsonBody.default = async (req) => {
  const body = await parseBody(req);
  const header = req.headers["x-ms-documentdb-partitionkey"];
  if (header !== undefined && body && typeof body === "object" && typeof body.query === "string") {
    try {
      const value = JSON.parse(header);
      Object.defineProperty(body, PARTITION, { value: Array.isArray(value) ? value[0] : value });
    } catch (error) {
      // not a partition key the emulator reads: the query reads every item, as before
    }
  }
  return body;
};
const Items = require("@vercel/cosmosdb-server/lib/account/items").default;
const queryAll = Items.prototype.query;
Items.prototype.query = function query(params, options) {
  if (!params || params[PARTITION] === undefined) {
    return queryAll.call(this, params, options);
  }
  const every = this._data; // read synchronously: no other request runs until this one returns
  this._data = new Map([...every].filter(([, item]) => this._getPartition(item.read()) === params[PARTITION]));
  try {
    return queryAll.call(this, params, options);
  } finally {
    this._data = every;
  }
};

const batchDocuments = require("@vercel/cosmosdb-server/lib/handler/batch-documents");
const trueHeader = require("@vercel/cosmosdb-server/lib/true-header");
const BATCH_OPERATIONS = {
  Create: batchOperations.createOperation,
  Upsert: batchOperations.upsertOperation,
  Read: batchOperations.readOperation,
  Delete: batchOperations.deleteOperation,
  Replace: batchOperations.replaceOperation,
};
batchDocuments.default = async (account, req, res, { dbId, collId }) => {
  const body = await jsonBody.default(req);
  const continueOnError = trueHeader.default(req, "x-ms-cosmos-batch-continue-on-error");
  const collection = account.database(dbId).collection(collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return {};
  }
  if (!Array.isArray(body)) {
    res.statusCode = 400;
    return { message: "Invalid request body" };
  }
  const batchKey = partitionHeader.default(req); // the SDKs send it once, for every operation (a delete has no body)
  // From here to the end nothing awaits: no other request runs while the batch is applied or undone.
  const documents = collection.documents;
  const { _set: set, delete: remove } = documents;
  const before = new Map(); // each item the batch touches, as it was (null: absent)
  const remember = (id, partition) => {
    const key = JSON.stringify([partition, id]);
    if (!before.has(key)) {
      const item = documents._item("/id", id, partition).read();
      before.set(key, { id, partition, item: item ? { ...item } : null });
    }
  };
  documents._set = function setRemembered(data) {
    remember(data.id, this._getPartition(data));
    return set.call(this, data);
  };
  documents.delete = function deleteRemembered(id, partition) {
    remember(id, partition);
    return remove.call(this, id, partition);
  };
  const answers = [];
  let failed = false;
  try {
    for (const input of body) {
      if (failed && !continueOnError) {
        answers.push({ statusCode: 424, requestCharge: 0 });
        continue;
      }
      const operation = BATCH_OPERATIONS[input ? input.operationType : null];
      if (!operation) {
        res.statusCode = 400;
        failed = true;
        return { message: `Operation type '${input && input.operationType}' is not supported in Batch.` };
      }
      if (input.partitionKey === undefined && batchKey !== undefined) input.partitionKey = batchKey;
      const result = operation(collection, input);
      failed = result.statusCode >= 400;
      answers.push(
        failed
          ? { statusCode: result.statusCode, requestCharge: 0 }
          : {
              statusCode: result.statusCode,
              requestCharge: 1,
              eTag: result.body ? result.body._etag : undefined,
              resourceBody: result.body,
            },
      );
    }
  } finally {
    documents._set = set;
    documents.delete = remove;
    if (failed && !continueOnError) {
      for (const { id, partition, item } of [...before.values()].reverse()) {
        if (documents._item("/id", id, partition).read()) remove.call(documents, id, partition);
        if (item) set.call(documents, item);
      }
    }
  }
  if (failed && !continueOnError) {
    return answers.map((answer) => (answer.statusCode < 400 ? { statusCode: 424, requestCharge: 0 } : answer));
  }
  return answers;
};

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
