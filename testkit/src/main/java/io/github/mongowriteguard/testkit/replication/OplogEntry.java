package io.github.mongowriteguard.testkit.replication;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One entry of a member's oplog: what one write (one statement, or one batch of inserts) changed, as documents after
 * the change (mongod's oplog is idempotent in the same way: an update is logged as its effect, not as the operators
 * the client sent), together with the retryable-write records of the statements that made the change, so that both
 * replicate, commit and roll back together ({@code src/mongo/db/op_observer_impl.cpp} writes the statement's
 * {@code lsid}, {@code txnNumber} and {@code stmtId} into its oplog entry).
 *
 * @param term    the primary's term when it wrote the entry
 * @param index   the position in the oplog, from 1
 * @param ops     the document or catalog changes, applied in order
 * @param records the retryable-write records of the statements
 */
record OplogEntry(long term, long index, List<Op> ops, List<RetryRecord> records) {

    OplogEntry {
        ops = List.copyOf(ops);
        records = List.copyOf(records);
    }

    /** A no-op entry, as a new primary writes one to start its term ({@code "new primary"}). */
    static OplogEntry noop(long term, long index, String message) {
        return new OplogEntry(term, index, List.of(new Noop(message)), List.of());
    }

    /** Whether this entry's optime {@code (term, index)} is after {@code other}'s (null: before everything). */
    boolean after(OplogEntry other) {
        return other == null || term > other.term || (term == other.term && index > other.index);
    }

    /** A change to the data. */
    sealed interface Op permits Insert, Put, Delete, Command, Noop {
        /** The change as a rollback file line shows it: {@code {op, ns, o}}. */
        BsonDocument describe();
    }

    /** A document inserted. */
    record Insert(String database, String collection, BsonDocument document) implements Op {
        @Override
        public BsonDocument describe() {
            return line("i", database + "." + collection, document);
        }
    }

    /** A document as an update (or an upsert, a replacement, a findAndModify) left it. */
    record Put(String database, String collection, BsonDocument document) implements Op {
        @Override
        public BsonDocument describe() {
            return line("u", database + "." + collection, document);
        }
    }

    /** A document deleted, by {@code _id}. */
    record Delete(String database, String collection, BsonValue id) implements Op {
        @Override
        public BsonDocument describe() {
            return line("d", database + "." + collection, new BsonDocument("_id", id));
        }
    }

    /** A catalog command ({@code create}, {@code drop}, {@code createIndexes}, ...), run again as it was run. */
    record Command(String database, BsonDocument command) implements Op {
        @Override
        public BsonDocument describe() {
            return line("c", database + ".$cmd", command);
        }
    }

    /** Nothing changed; marks a new term. */
    record Noop(String message) implements Op {
        @Override
        public BsonDocument describe() {
            return line("n", "", new BsonDocument("msg", new BsonString(message)));
        }
    }

    /**
     * The {@code config.transactions} side of a statement: session, transaction number, statement id and the result a
     * retry of the statement gets instead of running it again.
     */
    record RetryRecord(String sessionId, BsonDocument lsid, long txnNumber, int stmtId, BsonDocument outcome) {}

    private static BsonDocument line(String op, String namespace, BsonDocument object) {
        return new BsonDocument("op", new BsonString(op))
                .append("ns", new BsonString(namespace))
                .append("o", object);
    }

    /** The entry as {@code replSetGetStatus} and rollback diagnostics show an optime. */
    BsonDocument optime() {
        return new BsonDocument("ts", new BsonInt64(index)).append("t", new BsonInt64(term));
    }
}
