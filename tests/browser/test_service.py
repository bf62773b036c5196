#!/usr/bin/python3
"""The fsgpu web page in a real browser (headless Chromium driven by Selenium).

Run by tests/testthat/test-serve-browser.R against a server it started; by hand:

    /usr/bin/python3 tests/browser/test_service.py --url http://127.0.0.1:8080 \
        --data data.csv --bad bad.csv --small small.csv --out OUTDIR [--screens DIR]

It registers a user, uploads a file, submits an interaction search and a JMI selection,
watches them run, checks the result table, downloads the CSV files (into OUTDIR, for the R
test to compare with the R functions), logs out, and checks that another user and an
anonymous visitor cannot open the jobs. It writes OUTDIR/report.json and exits 0 when every
check passed; 77 when the browser cannot be started (the R test then skips).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

try:
    from selenium import webdriver
    from selenium.common.exceptions import (NoSuchElementException, StaleElementReferenceException, TimeoutException,
                                            WebDriverException)
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:  # the R test checks this first; by hand, say why
    print("selenium is not installed: %s" % e, file=sys.stderr)
    sys.exit(77)

SKIP = 77
WIDE = (1280, 800)
NARROW = (420, 860)


def find_binary(names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, url, downloads, screens):
        self.url = url.rstrip("/")
        self.downloads = downloads
        self.screens = screens
        self.profile = tempfile.mkdtemp(prefix="fsgpu-chromium-")
        chromium = find_binary(["chromium", "chromium-browser", "google-chrome"])
        driver = find_binary(["chromedriver"])
        if not chromium or not driver:
            raise SystemExit(SKIP)
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--user-data-dir=" + self.profile,
                     "--window-size=%d,%d" % WIDE]:
            opts.add_argument(flag)
        opts.add_experimental_option("prefs", {
            "download.default_directory": downloads,
            "download.prompt_for_download": False,
            "safebrowsing.enabled": False,
        })
        try:
            self.d = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
        except WebDriverException as e:
            print("Chromium could not be started: %s" % e.msg, file=sys.stderr)
            shutil.rmtree(self.profile, ignore_errors=True)
            raise SystemExit(SKIP)
        self.d.execute_cdp_cmd("Browser.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": downloads})
        self.d.set_window_size(*WIDE)

    def close(self):
        try:
            self.d.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def open(self, route):
        self.d.get(self.url + "/" + route)
        self.wait_for(lambda d: d.execute_script("return document.readyState") == "complete")

    def go(self, route):
        self.d.execute_script("location.hash = arguments[0];", route)

    def wait_for(self, cond, timeout=30, what="the page"):
        # The page re-renders while a job runs: an element found in one poll may be gone when its
        # text is read (stale), which only means "poll again".
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.1,
                                 ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(cond)
        except TimeoutException:
            raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))

    def find(self, css, timeout=30):
        return self.wait_for(EC.visibility_of_element_located((By.CSS_SELECTOR, css)), timeout, css)

    def text(self, css, timeout=30):
        # Found and read in one poll: an element re-rendered between the two is found again.
        def visible_text(d):
            e = d.find_element(By.CSS_SELECTOR, css)
            return (e.text,) if e.is_displayed() else False
        return self.wait_for(visible_text, timeout, css)[0]

    def click(self, css, timeout=30):
        # As text(): found and clicked in one poll, so a re-rendered button is found again.
        def clicked(d):
            e = d.find_element(By.CSS_SELECTOR, css)
            if not (e.is_displayed() and e.is_enabled()):
                return False
            e.click()
            return True
        self.wait_for(clicked, timeout, css)

    def exists(self, css):
        return len(self.d.find_elements(By.CSS_SELECTOR, css)) > 0

    def progress(self, css):
        """A progress bar's value, 0 when it is absent: read in the page's own script, in one step,
        so a bar the page re-renders between finding and reading is never stale."""
        v = self.d.execute_script("var e = document.querySelector(arguments[0]); return e ? e.value : 0;", css)
        return float(v or 0)

    def shot(self, name, size=WIDE, full=False):
        """A screenshot (PNG) of the window at size, or of the whole page when full."""
        if not self.screens:
            return
        if size != WIDE:
            self.d.set_window_size(*size)
            time.sleep(0.3)
        if full:
            height = self.d.execute_script(
                "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);")
            self.d.set_window_size(size[0], max(size[1], min(int(height) + 140, 4000)))
            time.sleep(0.3)
        self.d.execute_script("window.scrollTo(0, 0);")
        self.d.save_screenshot(os.path.join(self.screens, name + ".png"))
        self.d.set_window_size(*WIDE)

    def fetch_json(self, path):
        """A GET from the page (with its cookie), parsed."""
        return self.d.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'same-origin'}).then(function (r) { return r.json(); })"
            ".then(done, function () { done(null); });", path)

    def fetch_status(self, path):
        """The HTTP status of a GET from the page (with its cookie, without a token)."""
        return self.d.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'same-origin'}).then(function (r) { done(r.status); },"
            " function () { done(-1); });", path)


class Test:
    def __init__(self, args):
        self.args = args
        self.report = {"checks": [], "jobs": {}, "table": {}, "downloads": {}, "job_json": {}}
        self.downloads = os.path.join(args.out, "downloads")
        os.makedirs(self.downloads, exist_ok=True)
        if args.screens:
            os.makedirs(args.screens, exist_ok=True)
        self.b = Browser(args.url, self.downloads, args.screens)

    def check(self, ok, what):
        self.report["checks"].append({"check": what, "ok": bool(ok)})
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            raise AssertionError(what)

    # --- steps ----------------------------------------------------------------------------

    def register(self, user, password):
        b = self.b
        b.go("#/login")
        b.find("#register-form")
        b.find("#register-username").send_keys(user)
        b.find("#register-password").send_keys(password)
        b.find("#register-password2").send_keys(password)
        b.click("#register-submit")
        b.wait_for(lambda d: user in d.find_element(By.ID, "account").text or d.find_elements(By.ID, "register-error"),
                   what="the account line")
        if b.exists("#register-error"):
            raise AssertionError("registering %s failed: %s" % (user, b.text("#register-error")))
        self.check("Signed in as " + user in b.text("#account"), "registered and signed in as " + user)

    def login(self, user, password):
        b = self.b
        b.go("#/login")
        b.find("#login-username").send_keys(user)
        b.find("#login-password").send_keys(password)
        b.click("#login-submit")
        b.wait_for(lambda d: user in d.find_element(By.ID, "account").text, what="the account line")

    def logout(self):
        b = self.b
        b.click("#logout")
        b.wait_for(lambda d: "Not signed in" in d.find_element(By.ID, "account").text, what="logging out")
        self.check(b.exists("#login-link"), "logged out: the page offers to log in")

    def new_form(self, job, files, params=None, klass=None):
        """Fills the new-analysis form: files, job type, parameters (by R name)."""
        b = self.b
        b.go("#/new")
        b.find("#job-form")
        b.wait_for(EC.presence_of_element_located((By.ID, "job-" + job)), what="the job types")
        inp = b.d.find_element(By.ID, "file")
        inp.send_keys("\n".join(files))
        b.d.find_element(By.CSS_SELECTOR, "label[for='job-%s']" % job).click()
        if klass is not None:
            c = b.d.find_element(By.ID, "class")
            c.clear()
            c.send_keys(klass)
        for name, value in (params or {}).items():
            el = b.d.find_element(By.ID, "p-" + name)
            if el.tag_name == "select":
                Select(el).select_by_value(str(value))
            elif el.get_attribute("type") == "checkbox":
                if el.is_selected() != bool(value):
                    el.click()
            else:
                el.clear()
                el.send_keys(str(value))

    def submit(self):
        b = self.b
        b.click("#submit")
        b.wait_for(lambda d: d.execute_script("return location.hash").startswith("#/job/")
                   or len(d.find_elements(By.ID, "submit-error")) > 0, 120, "the submission")
        if b.exists("#submit-error"):
            raise AssertionError("the submission failed: " + b.text("#submit-error"))
        b.find("#job-id")
        return b.text("#job-id")

    def wait_done(self, timeout=300):
        b = self.b
        b.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#job-status .badge-done, #job-status .badge-failed,"
                                             " #job-status .badge-cancelled"), timeout, "the job to finish")
        status = b.text("#job-status .badge")
        if status != "Finished":
            err = b.text("#job-error") if b.exists("#job-error") else ""
            raise AssertionError("the job ended as %s %s" % (status, err))

    def table(self):
        """The result table as shown: header names and the cells of the first page."""
        b = self.b
        b.find("#data-table tbody tr", 60)
        head = [th.text.replace("▲", "").replace("▼", "").strip()
                for th in b.d.find_elements(By.CSS_SELECTOR, "#data-table thead th")]
        rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in b.d.find_elements(By.CSS_SELECTOR, "#data-table tbody tr")]
        return head, rows

    def download(self, button, name, timeout=60):
        """Clicks a download button and moves the file it saved to OUTDIR/name."""
        b = self.b
        before = set(os.listdir(self.downloads))
        b.click(button)
        deadline = time.time() + timeout
        while time.time() < deadline:
            new = [f for f in set(os.listdir(self.downloads)) - before if not f.endswith(".crdownload")]
            if new:
                src = os.path.join(self.downloads, new[0])
                time.sleep(0.2)
                dst = os.path.join(self.args.out, name)
                shutil.move(src, dst)
                return dst
            time.sleep(0.1)
        raise AssertionError("no file was downloaded by " + button)

    # --- the test -------------------------------------------------------------------------

    def run(self):
        a, b = self.args, self.b
        b.open("")
        b.find("#job-form")
        self.check("New analysis" in b.text("h1"), "the page opens on the new-analysis form")
        self.check(b.exists("#job-select") and b.exists("#job-interactions"),
                   "the form offers the jobs from /api/jobtypes")
        b.shot("01-new-analysis-anonymous", full=True)

        # A bad upload is refused before anything is queued, with the reader's message.
        self.new_form("select", [a.bad])
        b.click("#submit")
        err = b.text("#submit-error", 120)
        self.check(os.path.basename(a.bad) in err or "line" in err.lower(),
                   "a bad upload shows the server's message naming the file or line: " + err.replace("\n", " "))
        self.report["bad_upload_error"] = err
        b.shot("02-bad-upload-error", full=True)

        # An account
        b.go("#/login")
        b.find("#register-form")
        b.shot("03-login-register")
        self.register(a.user, a.password)

        # Interaction search first: the JMI selection then waits behind it with one worker.
        self.new_form("interactions", [a.data], a.interactions)
        b.shot("04-form-interactions", full=True)
        ids = {"interactions": self.submit()}
        self.check(b.exists("#job-status .badge"), "the job page shows the job's status")
        # Watch it start (the screenshot only if we catch it running: a fast machine may not let us).
        caught = False
        deadline = time.time() + 300
        while time.time() < deadline:
            s = b.text("#job-status .badge")
            if s == "Running" and b.exists("#job-progress"):
                shown = time.time() + 2   # a moment for the progress to move off 0
                while time.time() < shown and b.progress("#job-progress") == 0:
                    time.sleep(0.1)
                b.shot("07-job-running")
                caught = True
            if s != "Waiting":
                break
            time.sleep(0.1)
        self.report["caught_running"] = caught
        self.new_form("select", [a.data], {"method": "jmi", "k": a.k})
        b.shot("05-form-select-jmi", full=True)
        ids["select"] = self.submit()
        b.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#job-status .badge"), what="a status")
        state = b.text("#job-status .badge")
        self.report["select_first_status"] = state
        if state == "Waiting":
            b.shot("06-job-queued")
        self.report["jobs"] = ids

        # With --admin, the first user is the server's administrator (serve(admins = )).
        if a.admin:
            b.wait_for(lambda d: d.find_element(By.ID, "nav-admin").is_displayed(), what="the administrator's link")
            b.go("#/admin")
            b.find("#admin-workers")
            workers = b.d.find_elements(By.CSS_SELECTOR, "#admin-workers tbody tr")
            self.check(len(workers) >= 1, "the administrator sees the workers (%d)" % len(workers))
            b.shot("06b-admin-queue-workers")

        b.go("#/job/" + ids["interactions"])
        b.find("#job-status .badge")
        self.wait_done()
        head, rows = self.table()
        self.check(len(rows) > 0, "the interaction table has rows (%d)" % len(rows))
        self.report["table"]["interactions"] = {"columns": head, "rows": rows}
        self.report["downloads"]["interactions"] = self.download("#dl-csv", "interactions.csv")
        self.report["job_json"]["interactions"] = b.fetch_json("/api/jobs/" + ids["interactions"])
        b.find("#plot-img", 60)
        b.shot("08-result-interactions", full=True)

        # The JMI selection: table, sorting, plot, downloads.
        b.go("#/job/" + ids["select"])
        self.wait_done()
        head, rows = self.table()
        self.check(len(rows) == a.k, "the JMI table has k = %d rows (%d)" % (a.k, len(rows)))
        self.report["table"]["select"] = {"columns": head, "rows": rows}
        b.find("#plot-img", 60)
        self.check(b.exists("#plot-img"), "the JMI result shows the package's plot")
        self.check("Finished in" in b.text("#status-text"), "the page says how long the job took")
        self.report["status_text"] = b.text("#status-text")
        b.shot("09-result-select-jmi", full=True)
        b.shot("10-result-select-jmi-narrow", size=NARROW, full=True)
        self.sort_check(head)
        self.report["downloads"]["select"] = self.download("#dl-csv", "select.csv")
        self.report["job_json"]["select"] = b.fetch_json("/api/jobs/" + ids["select"])
        self.report["downloads"]["script"] = self.download("#dl-script", "select-script.R")

        # My jobs lists both
        b.go("#/jobs")
        b.find("#jobs-table")
        listed = [tr.get_attribute("data-id") for tr in b.d.find_elements(By.CSS_SELECTOR, "#jobs-table tbody tr")]
        self.check(all(i in listed for i in ids.values()), "My jobs lists both jobs")
        b.shot("11-my-jobs")

        # Log out: the jobs are closed to an anonymous visitor and to another user.
        self.logout()
        b.shot("12-logged-out")
        for job, i in ids.items():
            b.go("#/job/" + i)
            b.wait_for(lambda d: "Job not found" in d.find_element(By.CSS_SELECTOR, "#view h1").text,
                       what="'Job not found'")
            self.check(b.fetch_status("/api/jobs/" + i) == 404, "logged out: the %s job answers 404" % job)
        self.register(a.user + "2", a.password + "2")
        self.check(not b.d.find_element(By.ID, "nav-admin").is_displayed(), "another user has no administrator's link")
        b.go("#/admin")
        b.wait_for(lambda d: "for administrators" in d.find_element(By.ID, "admin").text, what="the refusal")
        self.check("for administrators" in b.text("#admin"), "another user is refused the queue view")
        for job, i in ids.items():
            b.go("#/job/" + i)
            b.wait_for(lambda d: "Job not found" in d.find_element(By.CSS_SELECTOR, "#view h1").text,
                       what="'Job not found'")
            self.check(b.fetch_status("/api/jobs/" + i) == 404, "another user: the %s job answers 404" % job)
            self.check(b.fetch_status("/api/jobs/" + i + "/result.csv") == 404,
                       "another user: the %s job's CSV answers 404" % job)
        b.shot("13-other-user-not-found")
        b.go("#/jobs")
        b.find("#jobs-mine")
        self.check(not b.exists("#jobs-table tbody tr"), "the other user's job list is empty")

        # Cancel a long search (one that reports its progress often: a job stops at its next
        # progress report), then delete it.
        self.new_form("interactions", [a.data], {"dimensions": 2, "discretizations": 1000})
        cancelled = self.submit()
        b.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#job-status .badge").text == "Running", 120,
                   "the search to start")
        b.click("#cancel")
        b.d.switch_to.alert.accept()
        b.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#job-status .badge").text in ("Cancelled", "Finished"),
                   300, "the cancellation")
        self.check(b.text("#job-status .badge") == "Cancelled", "a running job is cancelled from its page")
        b.shot("13b-job-cancelled")
        b.click("#delete")
        b.d.switch_to.alert.accept()
        b.wait_for(lambda d: d.execute_script("return location.hash") == "#/jobs", what="the job list")
        b.find("#jobs-mine")
        self.check(b.fetch_status("/api/jobs/" + cancelled) == 404, "a deleted job is gone (404)")
        self.logout()

        # Anonymous: the job's token lives in this browser; My jobs lists it.
        if a.small:
            self.new_form("select", [a.small], {"k": 3})
            anon = self.submit()
            self.wait_done()
            b.go("#/jobs")
            b.find("#jobs-local-table")
            listed = [tr.get_attribute("data-id")
                      for tr in b.d.find_elements(By.CSS_SELECTOR, "#jobs-local-table tbody tr")]
            self.check(anon in listed, "an anonymous job is listed from this browser's storage")
            self.check(b.fetch_status("/api/jobs/" + anon) == 404,
                       "without its token the anonymous job answers 404")
            self.report["jobs"]["anonymous"] = anon
            b.shot("14-my-jobs-anonymous")
        b.go("#/new")
        b.find("#job-form")
        b.shot("15-new-analysis-narrow", size=NARROW, full=True)
        b.go("#/help")
        b.find("#view h1")
        b.shot("16-help", full=True)

    def sort_check(self, head):
        """Clicking a numeric column sorts the rows, twice reverses them."""
        b = self.b
        col = next((j for j, h in enumerate(head) if h == "index"), None)
        if col is None:
            return
        th = b.d.find_elements(By.CSS_SELECTOR, "#data-table thead th")[col]

        def values():
            return [float(tr.find_elements(By.TAG_NAME, "td")[col].text)
                    for tr in b.d.find_elements(By.CSS_SELECTOR, "#data-table tbody tr")]
        th.find_element(By.TAG_NAME, "button").click()
        up = values()
        self.check(up == sorted(up) and th.get_attribute("aria-sort") == "ascending",
                   "clicking '%s' sorts ascending" % head[col])
        th.find_element(By.TAG_NAME, "button").click()
        down = values()
        self.check(down == sorted(down, reverse=True) and th.get_attribute("aria-sort") == "descending",
                   "clicking '%s' again sorts descending" % head[col])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--data", required=True, help="a CSV file for both jobs")
    p.add_argument("--bad", required=True, help="a CSV file the server must refuse")
    p.add_argument("--small", help="a small CSV file for an anonymous job")
    p.add_argument("--out", required=True)
    p.add_argument("--screens", help="where to write the screenshots (none by default)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--interactions", default='{"dimensions": 2, "divisions": 1, "discretizations": 30}',
                   help="the interaction search's settings (JSON)")
    p.add_argument("--user", default="ada")
    p.add_argument("--admin", action="store_true", help="the server has --user as its administrator")
    p.add_argument("--password", default="correct horse battery staple")
    args = p.parse_args()
    args.interactions = json.loads(args.interactions)
    os.makedirs(args.out, exist_ok=True)
    test = Test(args)
    status = 0
    try:
        test.run()
    except Exception as e:
        status = 1
        test.report["error"] = "%s: %s" % (type(e).__name__, e)
        traceback.print_exc()
        if args.screens:
            try:
                test.b.d.save_screenshot(os.path.join(args.screens, "failure.png"))
            except Exception:
                pass
    finally:
        test.b.close()
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump(test.report, f, indent=1)
    sys.exit(status)


if __name__ == "__main__":
    main()
