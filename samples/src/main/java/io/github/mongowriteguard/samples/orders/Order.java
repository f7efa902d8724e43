package io.github.mongowriteguard.samples.orders;

import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.mapping.Document;

/** An order as stored: {@code shop.orders}, {@code _id} the order id (the demo shards it hashed on {@code _id}). */
@Document("orders")
public record Order(@Id String id, String customerId, OrderStatus status, long totalCents) {}
