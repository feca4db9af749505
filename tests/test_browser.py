"""The review page and the explorer in a real browser: Debian's Chromium through Selenium.

Skipped, saying how to install them, where Chromium, chromedriver or Selenium
are missing. Slow (a browser start, every refutation checked): run with
`python -m pytest -m slow`, as .ci/run does. Screenshots go to .ci/artefacts/.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import checked, ctrl_c_reaches_it
from protocol.configurations.named import named_configurations
from protocol.render.narrate import story
from protocol.render.report import report_html

pytestmark = [pytest.mark.slow, pytest.mark.serial]

REFUTATIONS = [name for name, named in named_configurations().items() if named.violates]
ARTEFACTS = Path(__file__).resolve().parent.parent / ".ci" / "artefacts"
INSTALL = ("install the browser with `apt-get install chromium chromium-driver` and Selenium with "
           "`python -m pip install '.[browser]'`")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1400,1000")


def _browser_paths() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip(f"no Chromium or chromedriver here: {INSTALL}")
    return chromium, driver


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium with a fresh profile, logging every network request it makes."""
    webdriver = pytest.importorskip("selenium.webdriver", reason=f"Selenium is not installed: {INSTALL}")
    chromium, driver_path = _browser_paths()
    profile = tempfile.mkdtemp(prefix="protocol-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    # The system chromedriver, named, so that Selenium never looks for a driver to download.
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# What goes over the network; file:, data: and the browser's own chrome:// pages do not.
NETWORK_SCHEMES = ("http:", "https:", "ws:", "wss:", "ftp:")


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for since the last call (Chromium's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def screenshot(driver, name: str) -> Path:
    """The whole page, however long, into the artefact folder."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(height + 40, 800), 8000))
    path = ARTEFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    return path


# ------------------------------------------------------------------ the report


@pytest.mark.parametrize("name", REFUTATIONS)
def test_a_refutations_report_renders_steps_to_the_witness_without_the_network(browser, tmp_path, name):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    result = checked(name)
    trace = result.violation(result.named.violates)
    told = story(trace, result.config)
    page = tmp_path / f"{name}.html"
    page.write_text(report_html([result]), encoding="utf-8")
    requested_urls(browser)  # forget what came before
    browser.get(page.as_uri())

    section = browser.find_element(By.CSS_SELECTOR, "section.trace")
    rows = section.find_elements(By.CSS_SELECTOR, "table.steps tr.step")
    assert len(rows) == len(trace.steps)
    assert section.find_element(By.CSS_SELECTOR, "svg.sequence").is_displayed()
    sends = section.find_elements(By.CSS_SELECTOR, "svg.sequence g.arrow.send")
    sent = sum(len(new) - len(old) for before, after in zip(trace.steps, trace.steps[1:])
               for queue in ("mq", "iq")
               for old, new in zip(getattr(before.state, queue), getattr(after.state, queue))
               if new[:len(old)] == old)
    assert len(sends) == sent

    current = lambda: int(section.get_attribute("data-at"))  # noqa: E731
    assert current() == 1
    next_button = section.find_element(By.CSS_SELECTOR, 'button[data-go="next"]')
    for _ in range(len(trace.steps) - 1):
        next_button.click()
    assert current() == len(trace.steps) and not next_button.is_enabled()
    last_row = section.find_element(By.CSS_SELECTOR, "tr.step.current")
    assert last_row.get_attribute("data-step") == str(len(trace.steps))
    witness = last_row.find_element(By.CSS_SELECTOR, ".witness")
    assert witness.is_displayed()
    for line in told.violation or told.notes[:1]:
        assert line in witness.text
    highlighted = section.find_element(By.CSS_SELECTOR, "svg.sequence g.step.current")
    assert "violating" in highlighted.get_attribute("class")

    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.HOME)  # the keyboard steps back to the start
    assert current() == 1
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    assert current() == 2
    section.find_element(By.CSS_SELECTOR, 'button[data-go="last"]').click()

    outside = [url for url in requested_urls(browser) if url.startswith(NETWORK_SCHEMES)]
    assert outside == [], f"the page asked the network for {outside}"
    assert screenshot(browser, f"report-{name}").stat().st_size > 10_000


# ------------------------------------------------------------------ the explorer


@pytest.fixture
def explorer_url():
    """`python -m protocol explore HoldsRouted` on a free loopback port, stopped by Ctrl-C."""
    process = subprocess.Popen([sys.executable, "-m", "protocol", "explore", "HoldsRouted", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_reaches_it)
    try:
        line = process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert found, f"no address in {line!r}"
        yield found.group(1)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)  # a loaded CI machine starts slowly
        assert process.returncode == 0 and "Traceback" not in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_walk_the_holds_routed_counterexample_in_the_explorer_and_back(browser, explorer_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from selenium.common.exceptions import StaleElementReferenceException

    result = checked("HoldsRouted")
    trace = result.violation("I1")
    # The page redraws its lists after every step: an element found just before a redraw
    # goes stale, and the wait simply looks again.
    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(explorer_url)

    def path_length(n):
        return lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#path li")) == n

    def take(action: str):
        def clicked(driver) -> bool:
            driver.find_element(By.CSS_SELECTOR, f'#successors button[data-action="{action}"]').click()
            return True

        wait.until(clicked)

    def verdict(prop: str) -> str:
        return browser.find_element(By.CSS_SELECTOR, f'#verdicts li[data-property="{prop}"]').get_attribute("class")

    wait.until(path_length(1))
    for number, step in enumerate(trace.steps[1:], start=2):
        take(str(step.action))
        wait.until(path_length(number))
    wait.until(lambda d: verdict("I1") == "violated")
    witness = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#verdicts li[data-property="I1"] .witness').text)
    assert story(trace, result.config).violation[0] in witness
    assert "violates I1" in browser.find_element(By.ID, "where").text
    screenshot(browser, "explore-HoldsRouted")

    browser.find_element(By.ID, "back").click()
    wait.until(path_length(len(trace.steps) - 1))
    wait.until(lambda d: verdict("I1") == "holds")

    take("Publish(0)")  # forward again, then ask for the shortest path to where we are
    wait.until(lambda d: verdict("I1") == "violated")
    browser.find_element(By.ID, "shortest").click()
    wait.until(path_length(len(trace.steps)))
    shown = wait.until(lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, "#path li")])
    assert shown == ["Initial state"] + [str(step.action) for step in trace.steps[1:]]
    outside = [url for url in requested_urls(browser)
               if url.startswith(NETWORK_SCHEMES) and not url.startswith(explorer_url)]
    assert outside == [], f"the explorer asked for {outside}"


NOTES_APART = """
const notes = [...document.querySelectorAll('svg rect.note')].map(note => note.getBoundingClientRect());
let overlapping = 0;
notes.forEach((a, i) => notes.slice(i + 1).forEach(b => {
  if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlapping++;
}));
let outside = 0;
for (const drawing of document.querySelectorAll('svg')) {
  const box = drawing.getBoundingClientRect();
  for (const text of drawing.querySelectorAll('text')) {
    const t = text.getBoundingClientRect();
    if (t.right > box.right + 1 || t.left < box.left - 1) outside++;
  }
}
return [innerWidth, document.documentElement.scrollWidth, notes.length, overlapping, outside];
"""


@pytest.mark.parametrize("width", [420, 360])
def test_the_review_page_never_scrolls_sideways_on_a_narrow_screen(browser, tmp_path, width):
    """Issue 32 (low): on a phone's width the facts' long labels (a reachable state's words)
    pushed the page wider than the screen, and the diagram's notes were said to stack and
    overflow. A headless window is never narrower than 500 px, so the phone is emulated
    (Chromium's device metrics, as its developer tools do); the notes of the sequence
    diagrams must not overlap, nor any of its words leave its drawing."""
    page = tmp_path / "page.html"
    page.write_text(report_html([checked("HoldsRouted"), checked("HoldsCap"), checked("HoldsAlias")]),
                    encoding="utf-8")
    metrics = {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": True}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        browser.get(page.as_uri())
        window, page_width, notes, overlapping, outside = browser.execute_script(NOTES_APART)
        screenshot(browser, f"review-{width}px")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert window == width and page_width <= window, (window, page_width)
    assert notes > 0 and overlapping == 0 and outside == 0, (notes, overlapping, outside)
