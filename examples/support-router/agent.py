"""The support router, a scripted policy (no model, no key).

A triage agent that hands the customer off to the Billing, Technical or Account agent, which calls its tools and
answers.

    AGENT_VERSION=v1 python agent.py < job.json    # the release in baselines/v1: technical rules before account
    python agent.py < job.json                     # the current version: account rules first, so "login" and
                                                   # "phone" send app crashes and sync problems to AccountAgent

Triage: requests about someone else ("their") and questions no rule covers are declined without tools; otherwise
the first agent whose keywords start a word of the question takes it. The specialist picks the first intent whose
keywords match, runs its tools in order, and fills its answer from their results. Token counts and latencies are
modelled (../scripted_model.py).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripted_model import Episode, serve, tool

MODEL = "gpt-4o-mini"
SYSTEM = "You are the triage agent of a SaaS product's support desk. Route billing, technical and account questions."
DECLINE = "I'm sorry, I can only help with billing, technical and account questions about our product."

ROUTES = {
    "BillingAgent": ["subscription", "charge", "card", "invoice", "plan", "refund", "vat", "payment"],
    "TechnicalAgent": ["crash", "sync", "api", "sso", "dashboard", "webhook", "export", "rate"],
    "AccountAgent": [
        *["password", "email", "delete", "two-factor", "teammate", "locked", "workspace", "personal"],
        *["login", "phone"],  # the current version's additions: app crashes "on login" and sync "on my phone"
    ],
}
ORDER = {
    "v1": ["BillingAgent", "TechnicalAgent", "AccountAgent"],
    "current": ["BillingAgent", "AccountAgent", "TechnicalAgent"],
}

STATUS = {
    "app": "There is no outage",
    "api": "We're seeing elevated errors on the API",
    "dashboard": "No incident is open",
    "webhooks": "Webhook delivery is degraded",
    "sync": "Sync is healthy",
}
DOCS = {
    "login crash": "clearing the app cache and updating to version 4.2 fixes the login crash.",
    "dashboard": "the performance guide explains how to reduce the dashboard's date range.",
    "sync": "signing out and back in on the phone restores syncing.",
    "sso": "add AgentCI as a SAML app in Okta and paste the metadata URL.",
    "export": "choose CSV; the docs list every exported column.",
    "rate limit": "The limit is 600 requests per minute; the docs show how to batch requests.",
}


@tool(latency_ms=90)
def get_subscription() -> dict:
    return {"plan": "Team", "billing": "annual", "renews": "2027-01-31"}


@tool(latency_ms=120)
def cancel_subscription() -> dict:
    return {"status": "cancelled", "access_until": "end of the billing period"}


@tool(latency_ms=80)
def get_invoice() -> dict:
    return {"invoice": "INV-2211", "charges": 2, "card": "declined"}


@tool(latency_ms=110)
def refund_payment() -> dict:
    return {"status": "refunded"}


@tool(latency_ms=70)
def update_payment_method() -> dict:
    return {"link": "sent"}


@tool(latency_ms=100)
def change_plan() -> dict:
    return {"plan": "Pro", "prorated": True}


@tool(latency_ms=60)
def update_billing_profile() -> dict:
    return {"vat_number": "saved"}


@tool(latency_ms=130)
def check_service_status(component: str) -> str:
    return STATUS[component]


@tool(latency_ms=50)
def get_technical_documentation(topic: str) -> str:
    return DOCS[topic]


@tool(latency_ms=90)
def create_ticket(summary: str) -> dict:
    return {"ticket": "T-1042", "summary": summary}


@tool(latency_ms=100)
def verify_identity() -> dict:
    return {"verified": True}


@tool(latency_ms=90)
def reset_password() -> dict:
    return {"reset_link": "sent"}


@tool(latency_ms=90)
def update_account() -> dict:
    return {"updated": True}


@tool(latency_ms=110)
def delete_account() -> dict:
    return {"scheduled_in_days": 30}


@tool(latency_ms=100)
def reset_two_factor() -> dict:
    return {"two_factor": "reset"}


@tool(latency_ms=60)
def get_account() -> dict:
    return {"role": "member", "workspace": "acme"}


@tool(latency_ms=80)
def unlock_account() -> dict:
    return {"unlocked": True, "reason": "too many failed logins"}


@tool(latency_ms=70)
def create_data_export() -> dict:
    return {"export": "preparing", "eta_hours": 24}


def diagnose(component: str, topic: str) -> list:
    """The technical playbook for a fault: is the component down? then what the docs say."""
    return [(check_service_status, {"component": component}), (get_technical_documentation, {"topic": topic})]


def verified(action: object) -> list:
    """The account playbook: nothing changes on an account before the customer's identity is verified."""
    return [verify_identity, action]


def escalate(component: str, summary: str) -> list:
    """The technical playbook for an outage: the component's status, then a ticket."""
    return [(check_service_status, {"component": component}), (create_ticket, {"summary": summary})]


# agent → intents in order: (keywords, tool steps (a function, or (function, arguments)), answer; `{0}`, `{1}` are
# the steps' results)
INTENTS = {
    "BillingAgent": [
        (
            ["cancel"],
            [get_subscription, cancel_subscription],
            "Your subscription is cancelled; you keep access until the {1[access_until]}.",
        ),
        (
            ["charge"],
            [get_invoice, refund_payment],
            "You were billed twice by mistake; the duplicate charge has been {1[status]}.",
        ),
        (["card"], [update_payment_method], "I've sent a secure link to update your payment method."),
        (
            ["upgrade"],
            [get_subscription, change_plan],
            "You're now on the {1[plan]} plan; the difference is prorated on your next invoice.",
        ),
        (
            ["refund"],
            [get_subscription, refund_payment],
            "Your {0[billing]} plan has been {1[status]} for the unused months.",
        ),
        (
            ["vat"],
            [update_billing_profile],
            "Your VAT number is now on your billing profile and will appear on future invoices.",
        ),
        (
            ["payment"],
            [get_invoice, update_payment_method],
            "The card on file was {0[card]}; I've sent a link to update your payment method.",
        ),
        (["invoice"], [get_invoice], "Here is your latest invoice; a PDF copy is on its way to your email."),
    ],
    "TechnicalAgent": [
        (["rate"], [(get_technical_documentation, {"topic": "rate limit"})], "{0}"),
        (["crash"], diagnose("app", "login crash"), "{0}; {1}"),
        (["api"], escalate("api", "API errors"), "{0}; I've opened ticket {1[ticket]} and linked it to the incident."),
        (["sso"], [(get_technical_documentation, {"topic": "sso"})], "Follow the SSO guide: {0}"),
        (["dashboard"], diagnose("dashboard", "dashboard"), "{0}; {1}"),
        (["webhook"], escalate("webhooks", "missing webhooks"), "{0}; ticket {1[ticket]} tracks your missing events."),
        (["export"], [(get_technical_documentation, {"topic": "export"})], "Use Settings → Export and {0}"),
        (["sync"], diagnose("sync", "sync"), "{0}; {1}"),
    ],
    "AccountAgent": [
        (
            ["password"],
            verified(reset_password),
            "I've verified your identity and sent a password reset link.",
        ),
        (
            ["email"],
            verified(update_account),
            "Your account email is updated; please confirm it from the new address.",
        ),
        (
            ["delete"],
            verified(delete_account),
            "Your account is scheduled for deletion in {1[scheduled_in_days]} days, as our policy requires.",
        ),
        (
            ["two-factor"],
            verified(reset_two_factor),
            "After verifying your identity I reset two-factor authentication; set it up again at next login.",
        ),
        (["teammate"], [get_account], "Workspace owners can invite teammates from Settings → Members."),
        (["workspace"], verified(update_account), "Your workspace is renamed."),
        (
            ["personal"],
            verified(create_data_export),
            "Your personal data export is being prepared and will be emailed within {1[eta_hours]} hours.",
        ),
        (
            ["locked", "login", "phone"],
            verified(unlock_account),
            "Your account is unlocked; {1[reason]} had locked it.",
        ),
    ],
}


def matches(keywords: list[str], words: list[str]) -> bool:
    return any(word.startswith(keyword) for keyword in keywords for word in words)


def route(question: str, version: str) -> str | None:
    """The agent that takes the question, or None to decline."""
    words = re.findall(r"[\w-]+", question.lower())
    if "their" in words:  # someone else's account: never act on it
        return None
    return next((agent for agent in ORDER[version] if matches(ROUTES[agent], words)), None)


def support(question: str, version: str = "current") -> dict:
    episode = Episode(MODEL, SYSTEM, question, agent="TriageAgent")
    agent = route(question, version)
    if agent is None:
        return episode.answer(DECLINE)
    episode.hand_off(agent)
    words = re.findall(r"[\w-]+", question.lower())
    _, steps, answer = next(intent for intent in INTENTS[agent] if matches(intent[0], words))
    results = [episode.call(step[0], **step[1]) if isinstance(step, tuple) else episode.call(step) for step in steps]
    return episode.answer(answer.format(*results))


if __name__ == "__main__":
    serve(lambda question: support(question, os.environ.get("AGENT_VERSION", "current")))
