"""Client library of the Partner POS Ingestion Service: PosClient, its typed results and its one error type."""

from pos_partner_client.batching import DEFAULT_NAMESPACE, MAX_BATCH_BYTES, MAX_RECORDS_PER_BATCH
from pos_partner_client.client import PosClient
from pos_partner_client.errors import PosApiError, ProblemItem
from pos_partner_client.explain import CountedDay, Explanation, RecordDifference
from pos_partner_client.models import (
    BatchOutcome,
    BatchResult,
    BatchWarning,
    Code,
    CodeList,
    ControlTotals,
    DayPush,
    DayStatus,
    Mapping,
    MappingSet,
)
from pos_partner_client.tokens import ClientCredentials, TokenError, TokenSource
from pos_partner_client.transport import RetryPolicy, Wait

__all__ = [
    "DEFAULT_NAMESPACE",
    "MAX_BATCH_BYTES",
    "MAX_RECORDS_PER_BATCH",
    "BatchOutcome",
    "BatchResult",
    "BatchWarning",
    "ClientCredentials",
    "Code",
    "CodeList",
    "ControlTotals",
    "CountedDay",
    "DayPush",
    "DayStatus",
    "Explanation",
    "Mapping",
    "MappingSet",
    "PosApiError",
    "PosClient",
    "ProblemItem",
    "RecordDifference",
    "RetryPolicy",
    "TokenError",
    "TokenSource",
    "Wait",
]
