package io.github.mongowriteguard.test.spring;

import com.mongodb.ConnectionString;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;

/**
 * Spring Boot's connection details for an emulated deployment: its connection string, no SSL. With this bean, Boot's
 * client connects there and {@code spring.mongodb.uri} is not used (as with Testcontainers' service connections).
 *
 * @param connectionString the deployment's connection string
 */
record EmulatedMongoConnectionDetails(ConnectionString connectionString) implements MongoConnectionDetails {
    @Override
    public ConnectionString getConnectionString() {
        return connectionString;
    }
}
