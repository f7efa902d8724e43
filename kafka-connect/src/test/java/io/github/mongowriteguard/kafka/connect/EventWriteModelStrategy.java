package io.github.mongowriteguard.kafka.connect;

import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.kafka.connect.sink.converter.SinkDocument;
import com.mongodb.kafka.connect.sink.writemodel.strategy.WriteModelStrategy;
import org.apache.kafka.connect.errors.DataException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A user's write model strategy (the official sink's {@code writemodel.strategy} setting), as teams write them for
 * counters: an event {@code {_id, op, n}} becomes an {@code $inc} upsert (with {@code r}, a record number, it also
 * counts the record's own applications in {@code r.<number>}: {@link RecordLedger}), a replacement or a delete by {@code _id}; an
 * unknown {@code op} cannot be processed (a processing error, reported by the official processing).
 */
public final class EventWriteModelStrategy implements WriteModelStrategy {

    /** Instantiated by the official sink by its class name. */
    public EventWriteModelStrategy() {}

    @Override
    public WriteModel<BsonDocument> createWriteModel(SinkDocument document) {
        BsonDocument value = document.getValueDoc().orElseThrow(() -> new DataException("an event has a value"));
        BsonValue id = value.get("_id");
        String op = value.getString("op").getValue();
        return switch (op) {
            case "inc" -> {
                BsonDocument inc = new BsonDocument("n", value.get("n", new BsonInt32(1)));
                if (value.containsKey("r")) { // the record's own mark, counted by RecordLedger
                    inc.append(RecordLedger.MARKS + "." + value.getNumber("r").longValue(), new BsonInt32(1));
                }
                yield new UpdateOneModel<>(
                        Filters.eq("_id", id), new BsonDocument("$inc", inc), new UpdateOptions().upsert(true));
            }
            case "replace" ->
                new ReplaceOneModel<>(
                        Filters.eq("_id", id),
                        new BsonDocument("_id", id).append("n", value.get("n")).append("v", value.get("v")),
                        new ReplaceOptions().upsert(true));
            case "delete" -> new DeleteOneModel<>(Filters.eq("_id", id));
            // $inc of a field that a replacement made a string: the server refuses it (TypeMismatch)
            case "poison" ->
                new UpdateOneModel<>(
                        Filters.eq("_id", id), new BsonDocument("$inc", new BsonDocument("v", new BsonInt32(1))));
            default -> throw new DataException("unknown op " + op);
        };
    }
}
