package io.github.mongowriteguard.spec;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.spec.SpecClients;
import org.bson.BsonDocument;

/**
 * The spec runner's clients through a guard: a client entity is built from a builder given to
 * {@link WriteGuard#configure} and its collection entities write through the synchronous guard
 * ({@code guardCollection(...).asMongoCollection()}) or the reactive guard ({@code GuardedReactiveCollection.of(...)
 * .asMongoCollection()} on a Reactive Streams client of the same settings and command listener). Which tests and
 * which event expectations run is {@link GuardSpecCases}' rule.
 */
enum GuardSpecClients implements SpecClients {
    SYNCHRONOUS {
        @Override
        public Opened open(MongoClientSettings.Builder settings) {
            WriteGuard guard = WriteGuard.create();
            MongoClient client = MongoClients.create(guard.configure(settings).build());
            return Opened.of(
                    client,
                    collection -> guard.guardCollection(client, collection).asMongoCollection(),
                    client::close);
        }
    },
    REACTIVE {
        @Override
        public Opened open(MongoClientSettings.Builder settings) {
            // The synchronous client (reads, fail points, sessions) from the runner's settings as they are; the
            // reactive client, which sends the writes, from the same settings given to the guard. Both report to the
            // entity's command listener.
            MongoClient client = MongoClients.create(settings.build());
            WriteGuard guard = WriteGuard.create();
            com.mongodb.reactivestreams.client.MongoClient reactive =
                    com.mongodb.reactivestreams.client.MongoClients.create(
                            guard.configure(MongoClientSettings.builder(settings.build()))
                                    .build());
            return Opened.of(
                    client,
                    collection -> ReactiveWritesAsSync.of(
                            collection,
                            GuardedReactiveCollection.of(
                                            guard, reactive, ReactiveWritesAsSync.twin(reactive, collection))
                                    .asMongoCollection()),
                    () -> {
                        reactive.close();
                        client.close();
                    });
        }

        @Override
        public String skipReason(String file, BsonDocument test) {
            String common = GuardSpecCases.skipReason(file, test);
            return common != null ? common : GuardSpecCases.reactiveSkipReason(test);
        }
    };

    @Override
    public String skipReason(String file, BsonDocument test) {
        return GuardSpecCases.skipReason(file, test);
    }

    @Override
    public String eventsNotCompared(String file, BsonDocument test) {
        return GuardSpecCases.eventsNotCompared(file, test);
    }

    @Override
    public boolean ownCommand(String commandName, String databaseName, BsonDocument command) {
        return GuardSpecCases.guardCatalogRead(commandName, databaseName, command);
    }
}
