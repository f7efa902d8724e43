package io.github.mongowriteguard.testkit.sharding;

import org.bson.BsonDocument;

/** A shard's error reply that ends a mongos read; mongos returns {@link #reply()} to the client as it is. */
final class ShardReadException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient BsonDocument reply;

    ShardReadException(BsonDocument reply) {
        super(reply.toJson(), null, false, false);
        this.reply = reply;
    }

    BsonDocument reply() {
        return reply;
    }
}
