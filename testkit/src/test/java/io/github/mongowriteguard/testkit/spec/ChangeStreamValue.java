package io.github.mongowriteguard.testkit.spec;

import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import org.bson.BsonDocument;

/** The result of {@code createChangeStream}: an open change stream, saved as an entity or closed by the runner. */
record ChangeStreamValue(MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor) implements AutoCloseable {
    @Override
    public void close() {
        cursor.close();
    }
}
