package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.internal.client.model.bulk.AbstractClientDeleteModel;
import com.mongodb.internal.client.model.bulk.AbstractClientDeleteOptions;
import com.mongodb.internal.client.model.bulk.AbstractClientNamespacedWriteModel;
import com.mongodb.internal.client.model.bulk.AbstractClientUpdateModel;
import com.mongodb.internal.client.model.bulk.AbstractClientUpdateOptions;
import com.mongodb.internal.client.model.bulk.ClientWriteModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientDeleteManyModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientInsertOneModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientReplaceOneModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientReplaceOneOptions;
import com.mongodb.internal.client.model.bulk.ConcreteClientUpdateManyModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientUpdateOneModel;
import com.mongodb.internal.client.model.bulk.ConcreteClientUpdateOneOptions;
import io.github.mongowriteguard.exception.InvalidBulkException;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * A client-level write model ({@code ClientNamespacedWriteModel}) as the collection-level model of the same write,
 * with the same filter, update or document and options. The driver's public client models have no getters; the
 * driver's own implementation classes ({@code com.mongodb.internal.client.model.bulk}, driver-core 5.6.5) are read,
 * as its {@code ClientBulkWriteOperation} reads them. Documents are encoded with the client's codecs into
 * {@code BsonDocument}s of the guard's own (the caller's objects are never changed: the driver's client bulk writes
 * a generated {@code _id} into the encoded document only).
 */
final class ClientModels {
    private ClientModels() {}

    /** One write of a client bulk: its namespace and the collection-level model of the same write. */
    public record NamespacedModel(MongoNamespace namespace, WriteModel<BsonDocument> model) {}

    /** @throws InvalidBulkException for a null list or element, or a model kind this driver version does not have */
    public static List<NamespacedModel> convert(
            List<? extends ClientNamespacedWriteModel> models, CodecRegistry registry) {
        if (models == null) {
            throw new InvalidBulkException(
                    -1,
                    InvalidBulkException.Problem.NULL_MODELS,
                    "Invalid bulk write: the list of write models is null. Nothing was sent.");
        }
        List<NamespacedModel> converted = new ArrayList<>(models.size());
        for (int index = 0; index < models.size(); index++) {
            ClientNamespacedWriteModel model = models.get(index);
            if (!(model instanceof AbstractClientNamespacedWriteModel namespaced)) {
                throw new InvalidBulkException(
                        index,
                        InvalidBulkException.Problem.NULL_ELEMENT,
                        "Invalid bulk write: the model at index " + index + " is "
                                + (model == null
                                        ? "null"
                                        : "of an unknown class "
                                                + model.getClass().getName()) + ". Nothing was sent.");
            }
            converted.add(
                    new NamespacedModel(namespaced.getNamespace(), convert(index, namespaced.getModel(), registry)));
        }
        return converted;
    }

    private static WriteModel<BsonDocument> convert(int index, ClientWriteModel model, CodecRegistry registry) {
        if (model instanceof ConcreteClientInsertOneModel insert) {
            return new InsertOneModel<>(encode(insert.getDocument(), registry));
        }
        if (model instanceof ConcreteClientReplaceOneModel replace) {
            ConcreteClientReplaceOneOptions given = replace.getOptions();
            ReplaceOptions options = new ReplaceOptions();
            given.isUpsert().ifPresent(options::upsert);
            given.getCollation().ifPresent(options::collation);
            given.getHint().ifPresent(options::hint);
            given.getHintString().ifPresent(options::hintString);
            given.getSort().ifPresent(options::sort);
            return new ReplaceOneModel<>(replace.getFilter(), encode(replace.getReplacement(), registry), options);
        }
        if (model instanceof AbstractClientUpdateModel<?> update) {
            AbstractClientUpdateOptions given = update.getOptions();
            UpdateOptions options = new UpdateOptions();
            given.isUpsert().ifPresent(options::upsert);
            given.getArrayFilters().ifPresent(filters -> options.arrayFilters(list(filters)));
            given.getCollation().ifPresent(options::collation);
            given.getHint().ifPresent(options::hint);
            given.getHintString().ifPresent(options::hintString);
            if (given instanceof ConcreteClientUpdateOneOptions one) {
                one.getSort().ifPresent(options::sort);
            }
            boolean many = model instanceof ConcreteClientUpdateManyModel;
            if (!many && !(model instanceof ConcreteClientUpdateOneModel)) {
                throw unknown(index, model);
            }
            if (update.getUpdatePipeline().isPresent()) {
                List<Bson> pipeline = list(update.getUpdatePipeline().get());
                return many
                        ? new UpdateManyModel<>(update.getFilter(), pipeline, options)
                        : new UpdateOneModel<>(update.getFilter(), pipeline, options);
            }
            Bson mods = update.getUpdate().orElseThrow();
            return many
                    ? new UpdateManyModel<>(update.getFilter(), mods, options)
                    : new UpdateOneModel<>(update.getFilter(), mods, options);
        }
        if (model instanceof AbstractClientDeleteModel<?> delete) {
            AbstractClientDeleteOptions given = delete.getOptions();
            DeleteOptions options = new DeleteOptions();
            given.getCollation().ifPresent(options::collation);
            given.getHint().ifPresent(options::hint);
            given.getHintString().ifPresent(options::hintString);
            return model instanceof ConcreteClientDeleteManyModel
                    ? new DeleteManyModel<>(delete.getFilter(), options)
                    : new DeleteOneModel<>(delete.getFilter(), options);
        }
        throw unknown(index, model);
    }

    private static InvalidBulkException unknown(int index, Object model) {
        return new InvalidBulkException(
                index,
                InvalidBulkException.Problem.UNSUPPORTED_MODEL,
                "Invalid bulk write: the guard does" + " not know the client write model at index " + index + " ("
                        + model.getClass().getName() + "). Nothing was sent.");
    }

    private static List<Bson> list(Iterable<? extends Bson> items) {
        List<Bson> list = new ArrayList<>();
        items.forEach(list::add);
        return list;
    }

    @SuppressWarnings("unchecked")
    private static BsonDocument encode(Object document, CodecRegistry registry) {
        BsonDocument encoded = new BsonDocument();
        Codec<Object> codec = (Codec<Object>) registry.get(document.getClass());
        codec.encode(
                new BsonDocumentWriter(encoded),
                document,
                EncoderContext.builder().isEncodingCollectibleDocument(true).build());
        return encoded;
    }
}
