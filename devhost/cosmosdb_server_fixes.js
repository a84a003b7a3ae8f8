// Loaded with `node --require` before the CLI of @vercel/cosmosdb-server (the Cosmos DB emulator the
// tests run against), to close gaps between that emulator and Cosmos DB. Nothing else changes.
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
//    slowed with every other store-day written (235 ms at 6,000 records).
// 5. A transactional batch that an operation refuses is rolled back, as in Cosmos DB: the emulator kept the
//    operations before the refused one. Its operations take the batch's partition key (a delete has no item
//    to take it from). A store-day's sums item is written in the same batch as the records
//    it sums (decision 0108), so a half-applied batch would leave it wrong.
// 6. The emulator has no index: a query read every item of its container. It now keeps the items of each
//    logical partition and of each payment_id (the record index's /payment_ids/[], infra/cosmos/containers.json)
//    as they are written, and a query reads those of its partition key, of `c.pk IN (...)`, or of the
//    payment_ids it looks up, or, within named partitions, of the ids it names (`ARRAY_CONTAINS(@ids, c.id)`,
//    `c.id IN (...)`, `c.id = @x`, in a query without OR), as Cosmos DB's index would find them; the query
//    still decides on each item. The partner's payment-id look-up and an accept's read of the records it
//    replaces no longer slow with the items stored.
// 7. A transactional batch sent with `Prefer: return=minimal` (the SDKs' no_response, .NET's
//    EnableContentResponseOnWrite = false) answers each write's status and eTag without its item, as Cosmos DB
//    does; the emulator echoed every item, which the client then read and parsed (about 2 MB a 500-record accept).
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
// Fix 6: the items of each logical partition, and of each payment_id, kept as items are written, so that a
// query reads the items Cosmos DB's index would find rather than every item of the container.
const INDEX = Symbol("items by partition and by payment_id");
class ItemIndex {
  constructor(items) {
    this.items = items;
    this.byPartition = new Map(); // partition key -> Map(rid -> item)
    this.byPaymentId = new Map(); // payment_id -> Set(rid)
    for (const item of items._data.values()) this.add(item.read());
  }
  add(data) {
    const partition = this.items._getPartition(data);
    if (!this.byPartition.has(partition)) this.byPartition.set(partition, new Map());
    this.byPartition.get(partition).set(data._rid, this.items._data.get(data._rid));
    for (const paymentId of Array.isArray(data.payment_ids) ? data.payment_ids : []) {
      if (!this.byPaymentId.has(paymentId)) this.byPaymentId.set(paymentId, new Set());
      this.byPaymentId.get(paymentId).add(data._rid);
    }
  }
  remove(data) {
    const partition = this.byPartition.get(this.items._getPartition(data));
    if (partition) partition.delete(data._rid);
    for (const paymentId of Array.isArray(data.payment_ids) ? data.payment_ids : []) {
      const rids = this.byPaymentId.get(paymentId);
      if (rids) rids.delete(data._rid);
    }
  }
}
const indexOf = (items) => items[INDEX] || (items[INDEX] = new ItemIndex(items));
const setItem = Items.prototype._set;
Items.prototype._set = function setIndexed(data) {
  const result = setItem.call(this, data);
  if (this[INDEX]) this[INDEX].add(result);
  return result;
};
const deleteItem = Items.prototype.delete;
Items.prototype.delete = function deleteIndexed(idOrRid, partition) {
  const data = this._item("/id", idOrRid, partition).read();
  deleteItem.call(this, idOrRid, partition);
  if (data && this[INDEX]) this[INDEX].remove(data);
};

const IN_PARTITIONS = /\bc\.pk IN \(([^)]*)\)/i;
const BY_PAYMENT_ID = /JOIN p IN c\.payment_ids\b[\s\S]*\bARRAY_CONTAINS\(@(\w+), p\)/i;
const BY_ID = /\bARRAY_CONTAINS\(@(\w+), c\.id\)/i;
const IN_IDS = /\bc\.id IN \(([^)]*)\)/i;
const ID_IS = /\bc\.id = (@\w+)/i;
const ANY_OR = /\bOR\b/i;
function parameter(params, name) {
  const found = (params.parameters || []).find((one) => one.name === name);
  return found === undefined ? undefined : found.value;
}
// The ids a query names, `ARRAY_CONTAINS(@ids, c.id)`, `c.id IN (@a, @b)` or `c.id = @a` (undefined: none).
function idsOf(params) {
  const byId = BY_ID.exec(params.query);
  if (byId) return parameter(params, `@${byId[1]}`);
  const listed = IN_IDS.exec(params.query);
  const one = ID_IS.exec(params.query);
  const names = listed ? listed[1].split(",") : one ? [one[1]] : [];
  const ids = names.length ? names.map((name) => parameter(params, name.trim())) : undefined;
  return ids && ids.every((id) => typeof id === "string") ? ids : undefined;
}
// The items a query can match, as Cosmos DB would find them (null: every item): those of its partition key
// or of the partitions of `c.pk IN (...)`, and of the payment_ids of `JOIN p IN c.payment_ids ...
// ARRAY_CONTAINS(@ids, p)` or, in those partitions, of the ids it names. The query itself still decides on each.
function candidates(items, params) {
  let partitions = null;
  if (params[PARTITION] !== undefined) {
    partitions = [params[PARTITION]];
  } else {
    const listed = IN_PARTITIONS.exec(params.query);
    if (listed) partitions = listed[1].split(",").map((name) => parameter(params, name.trim()));
    if (partitions && partitions.some((value) => value === undefined)) partitions = null;
  }
  const byPayment = BY_PAYMENT_ID.exec(params.query);
  const paymentIds = byPayment ? parameter(params, `@${byPayment[1]}`) : undefined;
  if (partitions === null && !Array.isArray(paymentIds)) return null;
  const index = indexOf(items);
  const found = new Map();
  if (Array.isArray(paymentIds)) {
    const wanted = partitions === null ? null : new Set(partitions);
    for (const paymentId of paymentIds) {
      for (const rid of index.byPaymentId.get(paymentId) || []) {
        const item = items._data.get(rid);
        if (item && (wanted === null || wanted.has(items._getPartition(item.read())))) found.set(rid, item);
      }
    }
    return found;
  }
  const ids = ANY_OR.test(params.query) ? undefined : idsOf(params);
  if (Array.isArray(ids)) {
    for (const partition of partitions) {
      for (const id of ids) {
        const rid = items._index.get(items._getId("/id", id, partition));
        const item = rid === undefined ? undefined : items._data.get(rid);
        if (item) found.set(rid, item);
      }
    }
    return found;
  }
  if (partitions.length === 1) return new Map(index.byPartition.get(partitions[0]) || []);
  for (const partition of partitions) {
    for (const [rid, item] of index.byPartition.get(partition) || []) found.set(rid, item);
  }
  return found;
}
const queryAll = Items.prototype.query;
Items.prototype.query = function query(params, options) {
  const some = params && typeof params.query === "string" ? candidates(this, params) : null;
  if (some === null) {
    return queryAll.call(this, params, options);
  }
  const every = this._data; // read synchronously: no other request runs until this one returns
  this._data = some;
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
  const minimal = String(req.headers.prefer || "").toLowerCase() === "return=minimal";
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
              ...(minimal ? {} : { resourceBody: result.body }),
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
