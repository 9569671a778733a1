"""The browser harness itself (conftest.py): what one test leaves in the module's browser is gone before the next.

Journeys open the app with ``open_app(browser, url)`` and let the page go; left open, every such page kept its
booted Pyodide (about 300 MB each) until the module's browser closed, and a later test could find it among
``browser.contexts``. These tests run in file order: the first leaves its pages open, the others look."""

from __future__ import annotations

import pytest
from journeys import open_app
from playwright.sync_api import Browser

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shared_page(browser: Browser):
    """A page a module-scoped fixture opens is the module's, not a test's: it must outlive each test."""
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


def test_a_test_leaves_its_pages_open(browser: Browser, shared_page, site_url: str):
    open_app(browser, site_url, wait_ready=False)
    browser.new_context().new_page()
    assert len(browser.contexts) == 3


def test_the_next_test_finds_only_what_the_module_shares(browser: Browser, shared_page):
    assert browser.contexts == [shared_page.context]
    assert shared_page.evaluate("1 + 1") == 2
