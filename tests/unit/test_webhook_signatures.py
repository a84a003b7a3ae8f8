"""The app's Standard Webhooks signatures, checked by the specification's own library (`standardwebhooks`),
and the partner client's verification against that library's signatures (decision 0105)."""

from __future__ import annotations

import datetime as dt

import pytest
import standardwebhooks

from core.webhook_signatures import new_secret, signature, signed_headers

BODY = '{"type":"daily_close.reconciled","timestamp":"2026-11-21T03:15:00Z","data":{"store_id":"東京-01"}}'


def now() -> int:
    return int(dt.datetime.now(dt.UTC).timestamp())


def test_a_signature_is_what_the_library_computes():
    secret, stamp = new_secret(), now()
    library = standardwebhooks.Webhook(secret).sign("msg_1", dt.datetime.fromtimestamp(stamp, dt.UTC), BODY)
    assert signature(secret, "msg_1", stamp, BODY) == library


def test_the_library_accepts_the_signed_headers():
    secret = new_secret()
    headers = signed_headers([secret], "msg_2", now(), BODY)
    assert standardwebhooks.Webhook(secret).verify(BODY.encode(), headers)["data"]["store_id"] == "東京-01"


def test_during_a_rotation_both_secrets_verify():
    old, new = new_secret(), new_secret()
    headers = signed_headers([old, new], "msg_3", now(), BODY)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        standardwebhooks.Webhook(secret).verify(BODY, headers)


def test_another_secret_or_another_body_is_refused():
    secret = new_secret()
    headers = signed_headers([secret], "msg_4", now(), BODY)
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(new_secret()).verify(BODY, headers)
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(secret).verify(BODY.replace("東京", "大阪"), headers)


def test_secrets_are_whsec_and_32_random_bytes():
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50 and all(s.startswith("whsec_") and len(s) == 6 + 44 for s in secrets)


def test_the_partner_clients_verify_accepts_what_the_library_signs_and_refuses_the_rest():
    from pos_partner_client.webhooks import WebhookVerificationError, verify

    secret, stamp = new_secret(), now()
    moment = dt.datetime.fromtimestamp(stamp, dt.UTC)
    headers = {
        "Webhook-Id": "msg_5",
        "Webhook-Timestamp": str(stamp),
        "Webhook-Signature": "v1,bm90IGl0 " + standardwebhooks.Webhook(secret).sign("msg_5", moment, BODY),
    }
    assert verify(secret, BODY.encode(), headers)["type"] == "daily_close.reconciled"
    for wrong_secret, body, stamp_shift in ((new_secret(), BODY, 0), (secret, BODY + " ", 0), (secret, BODY, 600)):
        with pytest.raises(WebhookVerificationError):
            verify(wrong_secret, body.encode(), headers, now=stamp + stamp_shift)
