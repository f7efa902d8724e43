package io.github.mongowriteguard.spring.e2e;

import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.mapping.Document;

/** A store's stock of a product: {@code _id: {productId, storeId}}, hashed-sharded. */
@Document("storeInventory")
public record StoreInventory(@Id InventoryId id, int qty) {

    public record InventoryId(String productId, String storeId) {}

    /** Kafka value format of the test: {@code productId|storeId|qty}. */
    static StoreInventory parse(String value) {
        String[] parts = value.split("\\|");
        return new StoreInventory(new InventoryId(parts[0], parts[1]), Integer.parseInt(parts[2]));
    }

    String format() {
        return id.productId() + "|" + id.storeId() + "|" + qty;
    }
}
