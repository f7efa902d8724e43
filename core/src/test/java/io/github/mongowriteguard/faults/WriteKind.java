package io.github.mongowriteguard.faults;

/** The writes of the workload, each observable in the final documents through its unique tag. */
public enum WriteKind {
    /** An insert without {@code _id}: {@code {tag, t: "ins"}}; counted by its tag. */
    INSERT(false, true),
    /** An upserting replacement of a key the client owns: {@code {tag, t: "ent", seq}}; the last one applied stays. */
    REPLACE(false, true),
    /** {@code {$inc: {n: 1}, $push: {log: tag}}} on a shared counter: counted in its {@code log}. */
    INC(false, false),
    /** {@code updateMany({g}, {$push: {mlog: tag}})} on a group of 4 documents: counted per document. */
    UPDATE_MANY(true, false),
    /** {@code deleteMany({s})} of the 3 scratch documents made for it. */
    DELETE_MANY(true, true);

    private final boolean multiDocument;
    private final boolean idempotent;

    WriteKind(boolean multiDocument, boolean idempotent) {
        this.multiDocument = multiDocument;
        this.idempotent = idempotent;
    }

    public boolean multiDocument() {
        return multiDocument;
    }

    /** Whether applying it twice leaves what applying it once does (so a resend of an applied write does no harm). */
    public boolean idempotent() {
        return idempotent;
    }
}
