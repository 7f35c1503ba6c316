"""What every story is told with: its context (``Ctx``: the incident, its own random stream,
Kafka version, layout, names and start time), the names applications draw from, and the
cluster's brokers and group coordinator."""

from __future__ import annotations

from dataclasses import dataclass, field

from .world import Incident

APPS = [
    ("orders-enricher", "com.acme.orders", ["OrderEnricher", "PricingClient", "OrderRepository"]),
    ("billing-worker", "io.billing.worker", ["InvoiceHandler", "LedgerWriter", "TaxService"]),
    ("shipment-tracker", "com.shipco.tracking", ["EventHandler", "CarrierClient", "StatusStore"]),
    ("fraud-scorer", "ai.riskops.scoring", ["ScoreService", "FeatureLookup", "RuleEngine"]),
    ("inventory-sync", "net.retail.inventory", ["StockUpdater", "WarehouseClient", "SkuCache"]),
    ("email-dispatcher", "com.notify.mail", ["Dispatcher", "TemplateRenderer", "SmtpGateway"]),
    ("clickstream-loader", "io.analytics.loader", ["SessionLoader", "S3Writer", "SchemaRegistryCache"]),
    ("payment-auditor", "com.fintech.audit", ["AuditConsumer", "ReportWriter", "AccountLookup"]),
    ("geo-indexer", "org.maps.indexer", ["TileIndexer", "GeoCoder", "IndexWriter"]),
    ("loyalty-points", "com.shop.loyalty", ["PointsCalculator", "MemberStore", "CampaignRules"]),
]
SERVICES = ["pricing-service", "customer-api", "tax-engine", "postgres-primary", "redis-cache", "search-cluster"]
STORES = ["postgres", "redis", "s3://exports", "elasticsearch", "cassandra"]
TOPIC_WORDS = ["events", "orders", "payments", "updates", "commands", "clicks", "records", "transactions"]


@dataclass
class Ctx:
    """What a story needs: the incident, its own random stream, version, layout, names, start time."""

    inc: Incident
    rng: object
    version: str
    layout: str
    tag: str
    t0: int
    app: tuple
    fixed: dict = field(default_factory=dict)

    @property
    def scale(self) -> int:
        return self.inc.scale

    def name(self, key: str, default: str) -> str:
        return self.fixed.get(key, default)


def domain(ctx: Ctx) -> str:
    return ctx.name("domain", f"{ctx.tag}.internal")


def brokers(ctx: Ctx) -> list[str]:
    return [f"kafka-{i}.{domain(ctx)}:9092 (id: {i} rack: null)" for i in (1, 2, 3)]


def coordinator(ctx: Ctx) -> str:
    c = ctx.rng.randint(1, 3)
    return f"kafka-{c}.{domain(ctx)}:9092 (id: {2147483647 - c} rack: null)"
