// The fsgpu web page: a client of the JSON API under /api/ (see ?fsgpu::serve).
// Plain JavaScript, no build step, no outside resources. Every string that comes from the
// server or the user reaches the page as text (el() below makes text nodes), never as HTML.
"use strict";

(function () {
  var POLL_MS = 1000;
  var PAGE_ROWS = 100;
  var STORE_KEY = "fsgpu.jobs";
  // Parameters of every job that name columns of the upload: asked for with the data (step 1).
  var DATA_PARAMS = ["class", "id", "phenotype"];
  // What to type in a text setting whose default the word "automatic" would not tell.
  var PLACEHOLDER = {categorical: "auto, or column names: sex, stage"};

  var state = {
    me: null,          // GET /api/me
    jobtypes: null,    // GET /api/jobtypes
    visit: 0,          // bumped on every route change; stale async work checks it
    timer: null,       // the current view's polling timer
    flash: null,       // a one-time message for the next view
    draft: null,       // the new-analysis form's choices, kept while the user looks elsewhere
    cancelling: {}     // ids of running jobs whose cancellation was asked for
  };

  // Short explanations for biologists; the server's own title and help come first where it has them.
  var JOB_TEXT = {
    select: "Pick the features (genes, SNPs, ...) that together tell the classes apart best, " +
      "one at a time, each adding what the ones before did not already say.",
    pairs: "Score every pair of features by how much the two together say about the class, " +
      "and list the best pairs (including pairs that say little alone).",
    discretize: "Cut each numeric feature into a few intervals whose boundaries follow the classes, " +
      "for methods and tables that need categories.",
    knn: "For every sample, find the most similar other samples, and build the nearest-neighbour graph.",
    interactions: "Search every pair (or triple, ...) of features exhaustively for a joint effect on the class " +
      "(epistasis), with p-values, as MDFS does."
  };

  // How to read each job's table, in a sentence.
  var RESULT_TEXT = {
    select: "The features in the order they were selected. The score is the criterion's value when the " +
      "feature joined (for JMI, in bits: it grows with each feature, as it sums over the ones before).",
    pairs: "The best pairs of features first, with what they say about the class together.",
    discretize: "One row per feature: the cut points of its intervals.",
    knn: "One row per link between a point and one of its nearest neighbours, with their distance.",
    interactions: "One row per variable: its largest information gain over all tuples searched, and its " +
      "p-value before and after the multiple-testing adjustment. relevant is TRUE when the adjusted p-value " +
      "is below 0.05. Click p_value to see the strongest first."
  };

  // Plain words for the R names of the choices; the value sent stays the R name.
  var CHOICE_TEXT = {
    jmi: "joint mutual information (recommended)", mim: "each feature on its own", mrmr: "max relevance, min redundancy",
    mifs: "MIFS", cife: "CIFE", condred: "conditional redundancy", betagamma: "beta-gamma", icap: "ICAP",
    cmim: "conditional MI maximisation", disr: "double input symmetrical relevance", cmi: "conditional MI",
    jmim: "JMI maximin", njmim: "normalised JMI maximin",
    caim: "class-attribute interdependence (CAIM)", cacc: "class-attribute contingency (CACC)", ameva: "Ameva",
    mdlp: "minimum description length (Fayyad-Irani)", equal_width: "equal width", equal_freq: "equal frequency",
    pearson: "1 - Pearson correlation", spearman: "1 - Spearman correlation", cosine: "1 - cosine similarity",
    euclidean: "Euclidean distance", manhattan: "Manhattan distance",
    joint: "I(Y; Xi, Xj): what the pair says together", interaction: "interaction information (synergy)",
    holm: "Holm", hochberg: "Hochberg", hommel: "Hommel", bonferroni: "Bonferroni",
    BH: "Benjamini-Hochberg (false discovery rate)", BY: "Benjamini-Yekutieli", fdr: "false discovery rate (BH)",
    none: "no adjustment",
    knn: "each point and its k neighbours", mutual: "only mutual neighbours", snn: "shared nearest neighbours",
    samples: "samples (rows of the file)", features: "features (columns)"
  };

  // ---------------------------------------------------------------------------------------
  // Small helpers

  // el("p", {class: "x"}, "text", child, [more]): strings become text nodes, never markup.
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var v = attrs[key];
        if (v === null || v === undefined || v === false) return;
        if (key.slice(0, 2) === "on" && typeof v === "function") {
          node.addEventListener(key.slice(2), v);
        } else if (key === "class") {
          node.className = v;
        } else if (key === "text") {
          node.textContent = v;
        } else if (key === "value" || key === "checked" || key === "selected") {
          node[key] = v;
        } else {
          node.setAttribute(key, v === true ? "" : String(v));
        }
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { append(node, k); }); return; }
    node.appendChild(typeof kid === "object" ? kid : document.createTextNode(String(kid)));
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function fmtBytes(n) {
    if (n === null || n === undefined || isNaN(n)) return "";
    var units = ["bytes", "kB", "MB", "GB", "TB"];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
  }

  // The service's limits, from GET /api/me (which the page loads before its first view).
  function keptFor() {
    var h = state.me && state.me.anonymous_hours;
    if (h === null || h === undefined) return "a limited time";
    return h + (h === 1 ? " hour" : " hours");
  }

  function userQuota() {
    var q = state.me && state.me.user_quota;
    return q ? fmtBytes(q) : "room";
  }

  function fmtSeconds(s) {
    if (s === null || s === undefined || isNaN(s)) return "";
    s = Number(s);
    if (s < 1) return s.toFixed(2) + " s";
    if (s < 60) return s.toFixed(1) + " s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + " min " + Math.round(s - 60 * m) + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  function toDate(v) {
    if (v === null || v === undefined || v === "") return null;
    var d = typeof v === "number" ? new Date(v < 1e12 ? v * 1000 : v) : new Date(String(v).replace(" ", "T"));
    return isNaN(d.getTime()) ? null : d;
  }

  function fmtTime(v) {
    var d = toDate(v);
    if (!d) return v === null || v === undefined ? "" : String(v);
    return d.toLocaleString(undefined, {year: "numeric", month: "short", day: "numeric",
                                        hour: "2-digit", minute: "2-digit", second: "2-digit"});
  }

  function fmtAgo(v) {
    var d = toDate(v);
    if (!d) return v === null || v === undefined ? "" : String(v);
    var s = Math.max(0, (Date.now() - d.getTime()) / 1000);
    if (s < 60) return Math.round(s) + " s ago";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    return fmtTime(v);
  }

  // decimals: for a table column, the digits that show its largest values to 4 significant ones.
  function fmtCell(v, decimals) {
    if (v === null || v === undefined) return {text: "NA", na: true};
    if (typeof v === "number") {
      if (Number.isInteger(v) && decimals === undefined) return {text: String(v)};
      var a = Math.abs(v);
      if (a !== 0 && (a < 1e-3 || a >= 1e9)) return {text: v.toExponential(2), title: String(v)};
      var text = decimals === undefined ? String(Number(v.toPrecision(5))) : v.toFixed(decimals);
      return {text: text, title: String(v)};
    }
    if (typeof v === "boolean") return {text: v ? "TRUE" : "FALSE"};
    if (typeof v === "object") return {text: JSON.stringify(v)};
    return {text: String(v)};
  }

  function columnDecimals(values) {
    var big = 0, whole = true;
    values.forEach(function (v) {
      if (typeof v !== "number" || !isFinite(v)) return;
      if (!Number.isInteger(v)) whole = false;
      if (Math.abs(v) >= 1e-3) big = Math.max(big, Math.abs(v));
    });
    if (whole) return undefined;
    if (big === 0) return 3;
    return Math.max(0, Math.min(6, 3 - Math.floor(Math.log10(big))));
  }

  function sentence(text) {
    text = String(text || "").trim();
    return text && !/[.!?]$/.test(text) ? text + "." : text;
  }

  function jobTitle(job) {
    var t = state.jobtypes && state.jobtypes[job];
    return t && t.title ? t.title : String(job || "job");
  }

  function jobFunction(job) {
    var t = state.jobtypes && state.jobtypes[job];
    return t && t["function"] ? t["function"] + "()" : "";
  }

  var STATUS_TEXT = {queued: "Waiting", running: "Running", done: "Finished", failed: "Failed",
                     cancelled: "Cancelled"};

  function badge(status) {
    return el("span", {class: "badge badge-" + (STATUS_TEXT[status] ? status : "other")},
              STATUS_TEXT[status] || String(status));
  }

  function active(status) { return status === "queued" || status === "running"; }

  // ---------------------------------------------------------------------------------------
  // The API

  function ApiError(status, message) {
    this.status = status;
    this.message = message;
  }

  function headersFor(method, token) {
    var h = {"Accept": "application/json"};
    if (method !== "GET" && method !== "HEAD") h["X-Fsgpu"] = "1";
    if (token) h["Authorization"] = "Bearer " + token;
    return h;
  }

  function errorText(status, data, fallback) {
    if (data && typeof data === "object" && data.error) return String(data.error);
    if (typeof data === "string" && data) return data;
    return fallback || ("HTTP " + status);
  }

  function api(method, path, opts) {
    opts = opts || {};
    var headers = headersFor(method, opts.token);
    var body;
    if (opts.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.json);
    }
    return fetch(path, {method: method, headers: headers, body: body, credentials: "same-origin"})
      .then(function (res) {
        if (opts.raw && res.ok) return res;
        var type = res.headers.get("Content-Type") || "";
        var parse = type.indexOf("json") >= 0 ? res.json() : res.text();
        return parse.catch(function () { return null; }).then(function (data) {
          if (!res.ok) throw new ApiError(res.status, errorText(res.status, data, res.statusText));
          return data;
        });
      }, function () {
        throw new ApiError(0, "The server cannot be reached. Is fsgpu still running?");
      });
  }

  // Jobs submitted without an account: this browser keeps their ids and tokens.
  function savedJobs() {
    try {
      var list = JSON.parse(localStorage.getItem(STORE_KEY) || "[]");
      return Array.isArray(list) ? list.filter(function (j) { return j && j.id && j.token; }) : [];
    } catch (e) {
      return [];
    }
  }

  function writeSaved(list) {
    try { localStorage.setItem(STORE_KEY, JSON.stringify(list)); } catch (e) { /* private mode */ }
  }

  function saveJob(rec) { writeSaved([rec].concat(savedJobs().filter(function (j) { return j.id !== rec.id; }))); }

  function forgetJob(id) { writeSaved(savedJobs().filter(function (j) { return j.id !== id; })); }

  function tokenFor(id) {
    var j = savedJobs().filter(function (j) { return j.id === id; })[0];
    return j ? j.token : null;
  }

  function loadMe() {
    return api("GET", "/api/me").then(function (me) { state.me = me; }, function () {
      state.me = {user: null};
    }).then(renderAccount);
  }

  function loadJobtypes() {
    if (state.jobtypes) return Promise.resolve(state.jobtypes);
    return api("GET", "/api/jobtypes").then(function (t) { state.jobtypes = t; return t; });
  }

  function signedIn() { return !!(state.me && state.me.user); }

  // Downloads go through fetch so that a token (anonymous jobs) travels in the header.
  function download(path, filename, token, button) {
    if (button) button.disabled = true;
    return api("GET", path, {token: token, raw: true}).then(function (res) {
      return res.blob();
    }).then(function (blob) {
      var url = URL.createObjectURL(blob);
      var a = el("a", {href: url, download: filename, hidden: true});
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
    }).catch(function (e) {
      alertBox(button && button.parentNode, "The download failed: " + e.message);
    }).then(function () { if (button) button.disabled = false; });
  }

  // ---------------------------------------------------------------------------------------
  // Layout pieces

  function alertBox(parent, message, kind, detail) {
    if (!parent) return null;
    var box = el("div", {class: "alert alert-" + (kind || "error"), role: "alert"},
                 el("p", {class: "alert-title"}, message),
                 detail ? el("pre", {class: "alert-detail"}, detail) : null);
    parent.appendChild(box);
    return box;
  }

  function renderAccount() {
    var box = clear(document.getElementById("account"));
    var me = state.me || {};
    if (me.user) {
      var used = me.quota_bytes ? fmtBytes(me.used_bytes || 0) + " of " + fmtBytes(me.quota_bytes) + " used" : "";
      box.appendChild(el("span", {class: "who"}, "Signed in as ", el("strong", null, me.user),
                         used ? el("span", {class: "quota"}, used) : null));
      box.appendChild(el("button", {type: "button", class: "btn btn-small btn-quiet", id: "logout",
                                    onclick: logout}, "Log out"));
    } else {
      box.appendChild(el("span", {class: "who"}, "Not signed in"));
      box.appendChild(el("a", {class: "btn btn-small", href: "#/login", id: "login-link"}, "Log in or register"));
    }
    document.getElementById("nav-admin").hidden = !me.admin;
  }

  function logout() {
    api("POST", "/api/logout").catch(function () { return null; }).then(function () {
      state.flash = "You are logged out.";
      return loadMe();
    }).then(function () { go("#/login"); });
  }

  function view(title, lead) {
    var root = clear(document.getElementById("view"));
    document.title = title + " · fsgpu";
    var h1 = el("h1", {tabindex: "-1"}, title);
    root.appendChild(h1);
    if (state.flash) {
      alertBox(root, state.flash, "info");
      state.flash = null;
    }
    if (lead) root.appendChild(el("p", {class: "lead"}, lead));
    return {root: root, h1: h1};
  }

  function go(hash) {
    if (location.hash === hash) route(); else location.hash = hash;
  }

  // ---------------------------------------------------------------------------------------
  // New analysis

  function renderNew() {
    var v = view("New analysis",
                 "Upload a table of samples and features, choose what to compute, and fsgpu runs it " +
                 "on its GPU server. You can close this page while it runs: the job goes on, and " +
                 "you find it again under My jobs.");
    var visit = state.visit;
    if (!signedIn()) {
      var limit = state.me && state.me.upload_limit;
      var quota = limit ? " (uploads up to " + fmtBytes(limit) + ")" : "";
      v.root.appendChild(el("p", {class: "note"},
        "You are not signed in: your job is kept for " + keptFor(), quota,
        " and only this browser can open it. ",
        el("a", {href: "#/login"}, "Log in or register"),
        " to keep results until you delete them."));
    }
    var holder = el("div", {class: "loading"}, "Loading the job types…");
    v.root.appendChild(el("div", {class: "new-layout"}, holder, howItWorks()));
    loadJobtypes().then(function (types) {
      if (visit !== state.visit) return;
      holder.replaceWith(jobForm(types));
    }, function (e) {
      if (visit !== state.visit) return;
      clear(holder);
      alertBox(holder, "The job types could not be loaded: " + e.message);
    });
  }

  function howItWorks() {
    return el("aside", {class: "how card", "aria-labelledby": "how-title"},
      el("h2", {id: "how-title"}, "How it works"),
      el("ol", null,
         el("li", null, "Upload your table: samples in rows, features in columns, and a class column."),
         el("li", null, "Choose the analysis. The settings start at the R function's defaults."),
         el("li", null, "Watch it wait in the queue and run. You may close the page meanwhile."),
         el("li", null, "Read the result: a table you can sort, a plot, and files to download, including an " +
            "R script that reproduces it.")),
      el("h3", null, "A data file looks like this"),
      el("pre", {class: "example"}, "gene_A,gene_B,tissue\n2.31,0.12,tumour\n1.02,0.35,normal\n2.97,0.09,tumour"),
      el("p", {class: "help"}, "A file that cannot be read (a line with too few or too many values, say) is " +
         "refused before anything runs, with the line where the problem is. ", el("a", {href: "#/help"}, "More help")));
  }

  function jobKeys(types) {
    return Object.keys(types).filter(function (k) {
      return types[k] && typeof types[k] === "object" && Array.isArray(types[k].params);
    });
  }

  function formatList(types) {
    var f = types.formats;
    if (!f) return null;
    if (Array.isArray(f)) {
      // ".csv.gz" and the like go without saying: compression is explained next to the list
      f = f.filter(function (x) {
        return !(typeof x === "string" && /\.(gz|bz2|xz)$/.test(x) && f.indexOf(x.replace(/\.(gz|bz2|xz)$/, "")) >= 0);
      });
      return f.map(function (x) {
        if (x && typeof x === "object") {
          var ext = x.extensions || x.ext;
          return String(x.name || x.format || "") + (ext ? " (" + [].concat(ext).join(", ") + ")" : "");
        }
        return /^[a-z0-9]+$/i.test(String(x)) ? "." + x : String(x);
      }).join(", ");
    }
    if (typeof f === "object") {
      return Object.keys(f).map(function (k) {
        var x = f[k];
        return k + (x ? " (" + [].concat(x).join(", ") + ")" : "");
      }).join("; ");
    }
    return String(f);
  }

  function jobForm(types) {
    var keys = jobKeys(types);
    var draft = state.draft || {job: keys.indexOf("select") >= 0 ? "select" : keys[0], values: {}};
    state.draft = draft;
    var form = el("form", {id: "job-form", class: "job-form", novalidate: true});

    // 1. The data
    var fileInput = el("input", {type: "file", id: "file", name: "file", multiple: true,
                                 "aria-describedby": "file-help", required: true});
    var fileList = el("ul", {class: "file-list", id: "file-list", "aria-live": "polite"});
    var drop = el("div", {class: "drop"},
                  el("label", {for: "file", class: "drop-label"},
                     el("span", {class: "drop-title"}, "Choose your data file"),
                     el("span", {class: "drop-sub"}, "or drop it here (several files for PLINK)")),
                  fileInput, fileList);
    var formats = formatList(types);
    var classInput = el("input", {type: "text", id: "class", name: "class", autocomplete: "off",
                                  placeholder: "class, or the last column", "aria-describedby": "class-help",
                                  value: draft.values["class"] || ""});
    var idInput = el("input", {type: "text", id: "id", name: "id", autocomplete: "off",
                               placeholder: "found by itself", "aria-describedby": "id-help",
                               value: draft.values.id || ""});
    var phenoInput = el("input", {type: "text", id: "phenotype", name: "phenotype", autocomplete: "off",
                                  placeholder: "its last column", "aria-describedby": "phenotype-help",
                                  value: draft.values.phenotype || ""});
    var classField = el("div", {class: "field"},
      el("label", {for: "class"}, "Class column ", el("span", {class: "optional"}, "(optional)")),
      classInput,
      el("p", {class: "help", id: "class-help"},
         "The name (or number) of the column that holds the classes. Leave it empty to use the column " +
         "named \"class\", or else the last column."));
    var idField = el("div", {class: "field"},
      el("label", {for: "id"}, "Sample ID column ", el("span", {class: "optional"}, "(optional)")),
      idInput,
      el("p", {class: "help", id: "id-help"},
         "The name (or number) of the column that names the samples, as in the neighbours of a kNN graph. " +
         "Leave it empty to take the first column when it holds text or is named id, sample or sample_id; " +
         "\"none\" for no such column."));
    var phenoField = el("div", {class: "field", hidden: true},
      el("label", {for: "phenotype"}, "Phenotype column ", el("span", {class: "optional"}, "(optional)")),
      phenoInput,
      el("p", {class: "help", id: "phenotype-help"},
         "PLINK: the column of the phenotype file to use as the class. Leave it empty for its last column " +
         "(without a phenotype file, the .fam file's phenotype is used)."));
    form.appendChild(el("fieldset", {class: "step"},
      el("legend", null, el("span", {class: "step-no"}, "1"), "Your data"),
      drop,
      el("p", {class: "help", id: "file-help"},
         "A table with one row per sample and one column per feature (gene, SNP, measurement), plus " +
         "a column with each sample's class, such as tumour or normal. Files may be compressed " +
         "(.gz, .bz2, .xz). For genotypes, choose the PLINK .bed, .bim and .fam files together " +
         "with a phenotype file.",
         formats ? el("span", {class: "formats"}, " Accepted: " + formats + ".") : null),
      classField, idField, phenoField));

    function showFiles() {
      clear(fileList);
      Array.prototype.forEach.call(fileInput.files, function (f) {
        fileList.appendChild(el("li", null, el("span", {class: "file-name"}, f.name),
                                el("span", {class: "file-size"}, fmtBytes(f.size))));
      });
      drop.classList.toggle("has-files", fileInput.files.length > 0);
      var plink = Array.prototype.some.call(fileInput.files, function (f) { return /\.bed$/i.test(f.name); });
      phenoField.hidden = !plink;
      classField.hidden = plink;
      idField.hidden = plink;
    }
    fileInput.addEventListener("change", showFiles);
    ["dragenter", "dragover"].forEach(function (t) {
      drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add("dragging"); });
    });
    ["dragleave", "drop"].forEach(function (t) {
      drop.addEventListener(t, function () { drop.classList.remove("dragging"); });
    });
    drop.addEventListener("drop", function (e) {
      e.preventDefault();
      if (e.dataTransfer && e.dataTransfer.files.length) {
        fileInput.files = e.dataTransfer.files;
        showFiles();
      }
    });

    // 2. The job
    var choices = el("div", {class: "choices", role: "radiogroup", "aria-labelledby": "job-legend"});
    keys.forEach(function (k) {
      var t = types[k];
      var id = "job-" + k;
      choices.appendChild(el("div", {class: "choice"},
        el("input", {type: "radio", name: "job", id: id, value: k, checked: k === draft.job,
                     onchange: function () { draft.job = k; renderParams(); }}),
        el("label", {for: id},
           el("span", {class: "choice-title"}, t.title || k),
           el("span", {class: "choice-text"}, t.description || JOB_TEXT[k] || ""),
           t["function"] ? el("code", {class: "choice-fn"}, t["function"] + "()") : null)));
    });
    form.appendChild(el("fieldset", {class: "step"},
      el("legend", {id: "job-legend"}, el("span", {class: "step-no"}, "2"), "What to compute"),
      choices));

    // 3. The settings
    var paramBox = el("div", {class: "params", id: "params"});
    var paramLegend = el("legend", null, el("span", {class: "step-no"}, "3"), "Settings");
    form.appendChild(el("fieldset", {class: "step"}, paramLegend,
      el("p", {class: "help"}, "The names and defaults are those of the R function, so the R script " +
         "that comes with the result uses the same values. The defaults are a good start."),
      paramBox,
      el("button", {type: "button", class: "btn btn-quiet btn-small", onclick: function () {
        draft.values = {"class": classInput.value, id: idInput.value, phenotype: phenoInput.value};
        renderParams();
      }}, "Reset to the defaults")));

    function renderParams() {
      clear(paramBox);
      var t = types[draft.job];
      clear(paramLegend);
      append(paramLegend, [el("span", {class: "step-no"}, "3"), "Settings for " + (t.title || draft.job)]);
      t.params.forEach(function (p) {
        if (DATA_PARAMS.indexOf(p.name) < 0) paramBox.appendChild(paramField(p, draft));
      });
    }
    renderParams();

    // Submit
    var errors = el("div", {id: "form-errors"});
    var bar = el("progress", {id: "upload-progress", max: "1", value: "0", hidden: true,
                              "aria-label": "Upload progress"});
    var barText = el("span", {class: "upload-text", id: "upload-text", "aria-live": "polite"});
    var submit = el("button", {type: "submit", class: "btn btn-primary", id: "submit"}, "Run the analysis");
    form.appendChild(el("div", {class: "submit-row"}, submit, bar, barText));
    form.appendChild(errors);

    form.addEventListener("input", function (e) {
      if (e.target && e.target.name && e.target.type !== "file" && e.target.name !== "job") {
        draft.values[e.target.name] = e.target.type === "checkbox" ? e.target.checked : e.target.value;
      }
    });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      clear(errors);
      if (!fileInput.files.length) {
        alertBox(errors, "Choose a data file first.");
        fileInput.focus();
        return;
      }
      // The server enforces the limit; telling it here spares the user a long upload.
      var bytes = Array.prototype.reduce.call(fileInput.files, function (n, f) { return n + f.size; }, 0);
      var limit = state.me && state.me.upload_limit;
      if (limit && bytes > limit) {
        showSubmitError(errors, new ApiError(413, "The files hold " + fmtBytes(bytes) + "; " +
          (signedIn() ? "what is left of your quota is " : "without an account the limit is ") + fmtBytes(limit) +
          (signedIn() ? "." : ". Log in or register for more room.")));
        return;
      }
      var data = new FormData();
      Array.prototype.forEach.call(fileInput.files, function (f) { data.append("file", f, f.name); });
      data.append("job", draft.job);
      if (!classField.hidden && classInput.value.trim()) data.append("class", classInput.value.trim());
      if (!idField.hidden && idInput.value.trim()) data.append("id", idInput.value.trim());
      if (!phenoField.hidden && phenoInput.value.trim()) data.append("phenotype", phenoInput.value.trim());
      types[draft.job].params.forEach(function (p) {
        var input = form.elements["p-" + p.name];
        if (!input || DATA_PARAMS.indexOf(p.name) >= 0) return;
        var value = p.type === "bool" ? (input.checked ? "true" : "false") : String(input.value).trim();
        if (value !== "") data.append(p.name, value);
      });
      submit.disabled = true;
      bar.hidden = false;
      upload(data, bar, barText).then(function (res) {
        if (!signedIn()) {
          saveJob({id: res.id, token: res.token, job: draft.job, created: new Date().toISOString(),
                   files: Array.prototype.map.call(fileInput.files, function (f) { return f.name; })});
        }
        loadMe();  // the quota line
        go("#/job/" + encodeURIComponent(res.id));
      }, function (err) {
        submit.disabled = false;
        bar.hidden = true;
        barText.textContent = "";
        showSubmitError(errors, err);
      });
    });
    return form;
  }

  function paramField(p, draft) {
    var id = "p-" + p.name;
    var helpId = id + "-help";
    var saved = draft.values[id];
    var def = p["default"];
    var input;
    if (p.type === "choice" && Array.isArray(p.choices)) {
      input = el("select", {id: id, name: id, "aria-describedby": helpId});
      if (def === null || def === undefined) input.appendChild(el("option", {value: ""}, "none"));
      p.choices.forEach(function (c) {
        var words = CHOICE_TEXT[c];
        var plain = words && words.toLowerCase() !== String(c).toLowerCase();
        input.appendChild(el("option", {value: String(c)}, plain ? c + ": " + words : String(c)));
      });
      input.value = saved !== undefined ? saved : (def === null || def === undefined ? "" : String(def));
    } else if (p.type === "bool") {
      input = el("input", {type: "checkbox", id: id, name: id,
                           checked: saved !== undefined ? !!saved : !!def});
    } else {
      var numeric = p.type === "int" || p.type === "number";
      input = el("input", {type: numeric ? "number" : "text", id: id, name: id, "aria-describedby": helpId,
                           step: p.type === "int" ? "1" : (numeric ? "any" : null),
                           min: p.min !== undefined ? p.min : null, max: p.max !== undefined ? p.max : null,
                           placeholder: PLACEHOLDER[p.name] || (def === null || def === undefined ? "automatic" : null),
                           value: saved !== undefined ? saved : (def === null || def === undefined ? "" : String(def))});
    }
    var defText = def === null || def === undefined ? (p.type === "choice" ? "none" : "automatic") : String(def);
    if (p.type === "bool") defText = def ? "ticked" : "not ticked";
    var help = el("p", {class: "help", id: helpId}, p.help ? sentence(p.help) + " " : "",
                  el("span", {class: "default"}, "Default: " + defText + "."));
    if (p.type === "bool") {
      return el("div", {class: "field field-check"},
        el("span", {class: "field-name", "aria-hidden": "true"}, el("code", null, p.name)),
        el("div", {class: "check-row"}, input,
           el("label", {for: id}, el("span", {class: "sr-only"}, p.name + ": "), help)));
    }
    return el("div", {class: "field"},
      el("label", {for: id}, el("code", null, p.name),
         p.label ? el("span", {class: "param-label"}, " " + p.label) : null),
      input, help);
  }

  // XMLHttpRequest, not fetch, to show the progress of a large upload.
  function upload(data, bar, text) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/jobs");
      xhr.setRequestHeader("X-Fsgpu", "1");
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.onprogress = function (e) {
        if (!e.lengthComputable) return;
        bar.value = e.loaded / e.total;
        text.textContent = e.loaded < e.total ? "Uploading: " + fmtBytes(e.loaded) + " of " + fmtBytes(e.total)
                                              : "Checking the file…";
      };
      xhr.onload = function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = xhr.responseText; }
        if (xhr.status === 201 || xhr.status === 200) resolve(body);
        else reject(new ApiError(xhr.status, errorText(xhr.status, body, xhr.statusText)));
      };
      xhr.onerror = function () {
        reject(new ApiError(0, "The upload did not reach the server (connection lost, or the file is larger " +
                               "than the server accepts)."));
      };
      xhr.send(data);
    });
  }

  function showSubmitError(box, err) {
    var title = {
      400: "The server could not use this upload or these settings:",
      401: "Please log in again.",
      413: "The upload is larger than your limit allows:",
      429: "Too many submissions from this address. Please wait a minute and try again:"
    }[err.status] || "The job was not submitted:";
    var node = alertBox(box, title, "error", err.message);
    if (node) {
      node.id = "submit-error";
      if (err.status === 400) {
        node.appendChild(el("p", {class: "alert-hint"},
          "Nothing was queued. The message names the file, and where it knows them, the line and column " +
          "of the problem. Fix the file or the settings, then run again."));
      }
      node.scrollIntoView({block: "nearest"});
    }
  }

  // ---------------------------------------------------------------------------------------
  // One job

  function renderJob(id) {
    var v = view("Job", null);
    var visit = state.visit;
    var token = tokenFor(id);
    var statusBox = el("section", {class: "card status-card", id: "job-status", "aria-label": "Status"});
    var resultBox = el("section", {class: "result", id: "job-result"});
    var infoBox = el("section", {class: "card info-card", id: "job-info"});
    v.root.appendChild(statusBox);
    v.root.appendChild(resultBox);
    v.root.appendChild(infoBox);
    var shown = null;   // the status whose result is on the page

    function poll() {
      api("GET", "/api/jobs/" + encodeURIComponent(id), {token: token}).then(function (job) {
        if (visit !== state.visit) return;
        v.h1.textContent = jobTitle(job.job) + filesTitle(job.files);
        document.title = jobTitle(job.job) + " · fsgpu";
        drawStatus(statusBox, job, token);
        drawInfo(infoBox, job);
        if (job.status === "done" && shown !== "done") {
          shown = "done";
          drawResult(resultBox, job, token, visit);
        }
        if (active(job.status)) state.timer = setTimeout(poll, POLL_MS);
      }, function (e) {
        if (visit !== state.visit) return;
        if (e.status === 404) {
          v.h1.textContent = "Job not found";
          clear(statusBox);
          clear(infoBox).hidden = true;
          statusBox.appendChild(el("p", null,
            "There is no job with this address that you may open. It may have expired (jobs without an " +
            "account are kept for " + keptFor() + "), been deleted, or belong to another account."));
          if (token) {
            statusBox.appendChild(el("button", {type: "button", class: "btn btn-small", onclick: function () {
              forgetJob(id);
              go("#/jobs");
            }}, "Remove it from this browser's list"));
          } else if (!signedIn()) {
            statusBox.appendChild(el("p", null, el("a", {href: "#/login"}, "Log in"), " if it is one of your jobs."));
          }
        } else {
          clear(statusBox);
          alertBox(statusBox, "The job's status could not be read: " + e.message);
          state.timer = setTimeout(poll, 5 * POLL_MS);
        }
      });
    }
    poll();
  }

  // Rebuilt when the status changes; while it runs only the numbers and texts change, so that
  // a screen reader announces the status sentence (a live region) and not every percent.
  function drawStatus(box, job, token) {
    var p = Math.max(0, Math.min(1, Number(job.progress) || 0));
    var sentence = statusSentence(job);
    if (job.status === "running" && state.cancelling[job.id]) {
      sentence = "Cancelling: the job stops at its next progress step.";
    }
    if (box.getAttribute("data-status") === job.status) {
      var text = box.querySelector("#status-text");
      if (text.textContent !== sentence) text.textContent = sentence;
      var bar = box.querySelector("#job-progress");
      if (bar) {
        bar.value = p;
        box.querySelector(".progress-pct").textContent = Math.round(100 * p) + "%";
        box.querySelector(".progress-msg").textContent = job.message ? String(job.message) : "";
      }
      return;
    }
    clear(box);
    box.setAttribute("data-status", job.status);
    box.appendChild(el("div", {class: "status-line"}, badge(job.status),
                       el("span", {class: "status-text", id: "status-text", role: "status"}, sentence)));
    if (job.status === "running") {
      box.appendChild(el("div", {class: "progress-row"},
        el("progress", {id: "job-progress", max: "1", value: String(p), "aria-label": "Progress"}),
        el("span", {class: "progress-pct"}, Math.round(100 * p) + "%")));
      box.appendChild(el("p", {class: "progress-msg"}, job.message ? String(job.message) : ""));
    }
    if (job.status === "failed" && job.error) {
      alertBox(box, "The job stopped with this error:", "error", String(job.error)).id = "job-error";
    }
    var actions = el("div", {class: "actions"});
    if (active(job.status)) {
      actions.appendChild(el("button", {type: "button", class: "btn btn-danger", id: "cancel",
                                        disabled: !!state.cancelling[job.id],
                                        onclick: function (e) { removeJob(job, token, e.target, false); }},
                             "Cancel the job"));
    } else {
      actions.appendChild(el("button", {type: "button", class: "btn btn-quiet", id: "delete",
                                        onclick: function (e) { removeJob(job, token, e.target, true); }},
                             "Delete the job and its files"));
    }
    box.appendChild(actions);
  }

  // ": data.csv", or for a PLINK set ": hapmap (4 files)".
  function filesTitle(files) {
    if (!Array.isArray(files) || !files.length) return "";
    if (files.length === 1) return ": " + files[0];
    return ": " + String(files[0]).replace(/\.[^.]*$/, "") + " (" + files.length + " files)";
  }

  function statusSentence(job) {
    switch (job.status) {
      case "queued":
        return job.queue_position ? "In the queue, number " + job.queue_position + ". It starts when a worker is free."
                                  : "In the queue. It starts when a worker is free.";
      case "running":
        return "Running" + (job.device ? " on " + job.device : "") +
               (job.started ? ", since " + fmtTime(job.started) : "") + ".";
      case "done":
        return "Finished in " + fmtSeconds(job.seconds) + (job.device ? " on " + job.device : "") + ".";
      case "failed":
        return "Failed" + (job.seconds ? " after " + fmtSeconds(job.seconds) : "") + ".";
      case "cancelled":
        return "Cancelled.";
      default:
        return String(job.status);
    }
  }

  function removeJob(job, token, button, finished) {
    var question = finished ? "Delete this job, its upload and its results? This cannot be undone."
                            : "Cancel this job?";
    if (!window.confirm(question)) return;
    button.disabled = true;
    api("DELETE", "/api/jobs/" + encodeURIComponent(job.id), {token: token}).then(function (res) {
      if (res && res.status === "cancelling") state.cancelling[job.id] = true;
      if (finished) {
        forgetJob(job.id);
        state.flash = "The job was deleted.";
        go("#/jobs");
      } else {
        route();
      }
    }, function (e) {
      button.disabled = false;
      alertBox(button.parentNode, "That did not work: " + e.message);
    });
  }

  function drawInfo(box, job) {
    clear(box);
    var dl = el("dl", {class: "facts"});
    function fact(name, value) {
      if (value === null || value === undefined || value === "") return;
      dl.appendChild(el("dt", null, name));
      dl.appendChild(el("dd", null, value));
    }
    fact("Analysis", [jobTitle(job.job), jobFunction(job.job) ? el("code", {class: "fn"}, " " + jobFunction(job.job)) : null]);
    fact("Files", Array.isArray(job.files) ? job.files.join(", ") : null);
    fact("Submitted", fmtTime(job.created));
    fact("Started", fmtTime(job.started));
    fact("Finished", fmtTime(job.finished));
    fact("Device", job.device);
    fact("Time", job.seconds !== null && job.seconds !== undefined ? fmtSeconds(job.seconds) : null);
    fact("Job id", el("code", {id: "job-id"}, String(job.id)));
    var facts = el("div", null, el("h2", null, "Details"), dl);
    var settings = null;
    var params = job.params && typeof job.params === "object" ? Object.keys(job.params) : [];
    if (params.length) {
      var pl = el("dl", {class: "facts params-used"});
      params.forEach(function (k) {
        var val = job.params[k];
        if (val === null && DATA_PARAMS.indexOf(k) >= 0) return;
        pl.appendChild(el("dt", null, el("code", null, k)));
        pl.appendChild(el("dd", null, val === null ? "default" : Array.isArray(val) ? val.join(", ") : String(val)));
      });
      settings = el("div", null, el("h2", null, "Settings"), pl);
    }
    box.appendChild(el("div", {class: "info-grid"}, facts, settings));
  }

  function drawResult(box, job, token, visit) {
    clear(box);
    var base = "/api/jobs/" + encodeURIComponent(job.id);
    var stem = String(job.job || "result") + "-" + String(job.id).slice(0, 8);
    var rows = job.result && job.result.rows;
    box.appendChild(el("h2", null, "Result"));
    var downloads = el("div", {class: "downloads", id: "downloads"},
      el("span", {class: "downloads-title"}, "Download:"),
      dlButton("Table (CSV)", "dl-csv", base + "/result.csv", stem + ".csv",
               "Opens in Excel, LibreOffice or R (read.csv)."),
      dlButton("R object (.rds)", "dl-rds", base + "/result.rds", stem + ".rds", "readRDS() in R gives the full result."),
      dlButton("R script", "dl-script", base + "/script.R", stem + ".R",
               "Reproduces the result with fsgpu on your own computer."));
    function dlButton(label, id, path, name, title) {
      return el("button", {type: "button", class: "btn btn-small", id: id, title: title,
                           onclick: function (e) { download(path, name, token, e.currentTarget); }}, label);
    }
    box.appendChild(downloads);

    var figure = el("figure", {class: "plot card", id: "plot", hidden: true});
    var tableBox = el("div", {class: "card table-card", id: "result-table"},
                      el("p", {class: "loading"}, "Loading the table…"));
    box.appendChild(el("div", {class: "result-grid"}, figure, tableBox));

    api("GET", base + "/plot.png", {token: token, raw: true}).then(function (res) {
      return res.blob();
    }).then(function (blob) {
      if (visit !== state.visit) return;
      var src = URL.createObjectURL(blob);
      var img = el("img", {src: src, id: "plot-img",
                           alt: "The package's plot of the result of this " + jobTitle(job.job).toLowerCase() + "."});
      figure.appendChild(el("a", {href: src, target: "_blank", rel: "noopener", title: "Open the plot on its own"}, img));
      figure.appendChild(el("figcaption", null, "The plot that R's plot() draws for this result. ",
                            el("button", {type: "button", class: "btn btn-small btn-quiet", id: "dl-plot",
                                          onclick: function (e) { download(base + "/plot.png", stem + ".png", token, e.currentTarget); }},
                               "Download the plot (PNG)")));
      figure.hidden = false;
    }, function () { /* no plot for this job */ });

    api("GET", base + "/result.json", {token: token}).then(function (res) {
      if (visit !== state.visit) return;
      clear(tableBox);
      tableBox.appendChild(resultTable(res, rows, RESULT_TEXT[job.job]));
    }, function (e) {
      if (visit !== state.visit) return;
      clear(tableBox);
      alertBox(tableBox, "The table could not be loaded: " + e.message);
    });
  }

  // A sortable, filterable table of result.json ({columns, rows, total}).
  function resultTable(res, totalRows, about) {
    var columns = (res && res.columns) || [];
    var all = (res && res.rows) || [];
    var total = res && res.total !== undefined ? res.total : (totalRows !== undefined ? totalRows : all.length);
    var numeric = columns.map(function (c, j) {
      return all.every(function (r) { return r[j] === null || typeof r[j] === "number"; });
    });
    var decimals = columns.map(function (c, j) {
      return numeric[j] ? columnDecimals(all.map(function (r) { return r[j]; })) : undefined;
    });
    var sortCol = -1, sortDir = 1, shown = PAGE_ROWS, filter = "";
    var wrap = el("div", {class: "table-wrap"});
    var caption = el("p", {class: "table-caption", id: "table-caption", "aria-live": "polite"});
    var search = el("input", {type: "search", id: "table-filter", placeholder: "Filter rows, e.g. a gene name",
                              "aria-label": "Filter the rows"});
    var more = el("button", {type: "button", class: "btn btn-small btn-quiet", id: "more-rows"}, "Show more rows");
    var table = el("table", {class: "data", id: "data-table"});
    var thead = el("thead");
    var tbody = el("tbody");
    table.appendChild(el("caption", {class: "sr-only"}, "The result, one row per line of the CSV file. " +
                         "The column buttons sort it."));
    table.appendChild(thead);
    table.appendChild(tbody);
    wrap.appendChild(table);

    var headRow = el("tr");
    columns.forEach(function (c, j) {
      var th = el("th", {scope: "col", class: numeric[j] ? "num" : null, "aria-sort": "none"},
                  el("button", {type: "button", class: "sort", onclick: function () {
                    if (sortCol === j) sortDir = -sortDir; else { sortCol = j; sortDir = 1; }
                    draw();
                  }}, String(c), el("span", {class: "sort-mark", "aria-hidden": "true"})));
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);

    function rowsNow() {
      var rows = all;
      if (filter) {
        var f = filter.toLowerCase();
        rows = rows.filter(function (r) {
          return r.some(function (v) { return v !== null && String(v).toLowerCase().indexOf(f) >= 0; });
        });
      }
      if (sortCol >= 0) {
        var j = sortCol;
        rows = rows.map(function (r, i) { return [r, i]; }).sort(function (a, b) {
          var x = a[0][j], y = b[0][j];
          if (x === y) return a[1] - b[1];
          if (x === null) return 1;        // NA last, in both directions
          if (y === null) return -1;
          var c = numeric[j] ? x - y : String(x).localeCompare(String(y), undefined, {numeric: true});
          return c === 0 ? a[1] - b[1] : sortDir * c;
        }).map(function (p) { return p[0]; });
      }
      return rows;
    }

    function draw() {
      var rows = rowsNow();
      clear(tbody);
      rows.slice(0, shown).forEach(function (r) {
        var tr = el("tr");
        r.forEach(function (v, j) {
          var c = fmtCell(v, decimals[j]);
          tr.appendChild(el("td", {class: (numeric[j] ? "num" : "") + (c.na ? " na" : ""), title: c.title || null},
                            c.text));
        });
        tbody.appendChild(tr);
      });
      Array.prototype.forEach.call(headRow.children, function (th, j) {
        var sorted = j === sortCol;
        th.setAttribute("aria-sort", sorted ? (sortDir > 0 ? "ascending" : "descending") : "none");
        th.querySelector(".sort-mark").textContent = sorted ? (sortDir > 0 ? " ▲" : " ▼") : "";
      });
      var n = Math.min(shown, rows.length);
      var text = rows.length === 0 ? "No rows" + (filter ? " match the filter." : ".")
        : "Showing " + n.toLocaleString() + " of " + rows.length.toLocaleString() + " rows" +
          (filter ? " that match" : "") + ".";
      if (total > all.length) {
        text += " The page holds the first " + all.length.toLocaleString() + " of " + Number(total).toLocaleString() +
                " rows; the CSV file has them all.";
      }
      caption.textContent = text;
      more.hidden = rows.length <= shown;
    }

    search.addEventListener("input", function () { filter = search.value.trim(); shown = PAGE_ROWS; draw(); });
    more.addEventListener("click", function () { shown += 10 * PAGE_ROWS; draw(); });
    draw();
    return el("div", null,
              el("div", {class: "table-tools"}, el("h3", null, "Table"), search),
              about ? el("p", {class: "about"}, about) : null,
              el("p", {class: "help"}, "Click a column name to sort by it; click again to reverse."),
              caption, wrap, more);
  }

  // ---------------------------------------------------------------------------------------
  // My jobs

  function renderJobs() {
    var v = view("My jobs", signedIn()
      ? "Your jobs, newest first. They are kept until you delete them."
      : "Jobs submitted from this browser without an account, newest first. They are kept for " + keptFor() + ".");
    var visit = state.visit;
    var mine = el("div", {id: "jobs-mine"});
    var local = el("div", {id: "jobs-local"});
    v.root.appendChild(mine);
    v.root.appendChild(local);

    function refresh() {
      var busy = false;
      var work = [];
      if (signedIn()) {
        work.push(api("GET", "/api/jobs").then(function (jobs) {
          if (visit !== state.visit) return;
          clear(mine);
          mine.appendChild(jobsTable(jobs, "jobs-table", "You have no jobs yet."));
          busy = busy || jobs.some(function (j) { return active(j.status); });
        }, function (e) {
          if (visit !== state.visit) return;
          clear(mine);
          alertBox(mine, "Your jobs could not be loaded: " + e.message);
        }));
      }
      var saved = savedJobs();
      if (saved.length || !signedIn()) {
        work.push(Promise.all(saved.map(function (s) {
          return api("GET", "/api/jobs/" + encodeURIComponent(s.id), {token: s.token}).then(function (j) {
            return j;
          }, function (e) {
            return {id: s.id, job: s.job, created: s.created, files: s.files,
                    status: e.status === 404 ? "expired" : "unknown"};
          });
        })).then(function (jobs) {
          if (visit !== state.visit) return;
          clear(local);
          if (signedIn() && jobs.length) {
            local.appendChild(el("h2", null, "Also submitted from this browser without an account"));
          }
          local.appendChild(jobsTable(jobs, "jobs-local-table",
            "No jobs yet from this browser. Start one under New analysis."));
          busy = busy || jobs.some(function (j) { return active(j.status); });
        }));
      }
      Promise.all(work).then(function () {
        if (busy && visit === state.visit) state.timer = setTimeout(refresh, 3 * POLL_MS);
      });
    }
    refresh();
  }

  function jobsTable(jobs, id, empty) {
    if (!jobs.length) {
      return el("p", {class: "empty"}, empty, " ", el("a", {href: "#/new"}, "New analysis"));
    }
    var tbody = el("tbody");
    jobs.forEach(function (j) {
      var expired = j.status === "expired";
      tbody.appendChild(el("tr", {"data-id": String(j.id)},
        el("td", null, expired ? jobTitle(j.job) : el("a", {href: "#/job/" + encodeURIComponent(j.id)}, jobTitle(j.job))),
        el("td", {class: "files"}, Array.isArray(j.files) ? j.files.join(", ") : ""),
        el("td", null, expired ? el("span", {class: "badge badge-other"}, "Expired or deleted") : badge(j.status),
           active(j.status) && j.progress ? el("span", {class: "mini-pct"}, " " + Math.round(100 * j.progress) + "%") : null),
        el("td", null, fmtTime(j.created)),
        el("td", {class: "num"}, j.seconds !== null && j.seconds !== undefined ? fmtSeconds(j.seconds) : ""),
        el("td", null, expired
          ? el("button", {type: "button", class: "btn btn-small btn-quiet", onclick: function () {
              forgetJob(j.id);
              route();
            }}, "Remove")
          : el("a", {class: "btn btn-small", href: "#/job/" + encodeURIComponent(j.id)}, "Open"))));
    });
    return el("div", {class: "table-wrap card"},
      el("table", {class: "data jobs", id: id},
         el("thead", null, el("tr", null,
            el("th", {scope: "col"}, "Analysis"), el("th", {scope: "col"}, "Files"),
            el("th", {scope: "col"}, "Status"), el("th", {scope: "col"}, "Submitted"),
            el("th", {scope: "col", class: "num"}, "Time"), el("th", {scope: "col"}, el("span", {class: "sr-only"}, "Open")))),
         tbody));
  }

  // ---------------------------------------------------------------------------------------
  // Log in, register

  function renderLogin() {
    var v = view(signedIn() ? "Account" : "Log in or register",
                 "With an account your jobs are kept until you delete them, you have " + userQuota() + " for uploads " +
                 "and results, and you find your jobs from any browser. Without one, jobs are kept " + keptFor() +
                 (state.me && state.me.anonymous_upload ? " and uploads are limited to " + fmtBytes(state.me.anonymous_upload) : "") + ".");
    if (signedIn()) {
      v.root.appendChild(el("p", null, "You are signed in as ", el("strong", null, state.me.user), ". ",
                            el("a", {href: "#/jobs"}, "Your jobs")));
      return;
    }
    var grid = el("div", {class: "login-grid"});
    grid.appendChild(accountForm("login", "Log in", "I have an account", false));
    grid.appendChild(accountForm("register", "Create an account", "I am new here", true));
    v.root.appendChild(grid);
  }

  function accountForm(kind, button, title, repeat) {
    var prefix = kind + "-";
    var errors = el("div", {id: prefix + "errors"});
    var user = el("input", {type: "text", id: prefix + "username", name: "username", required: true,
                            autocomplete: "username", autocapitalize: "none", spellcheck: "false"});
    var pass = el("input", {type: "password", id: prefix + "password", name: "password", required: true,
                            autocomplete: repeat ? "new-password" : "current-password"});
    var pass2 = repeat ? el("input", {type: "password", id: prefix + "password2", required: true,
                                      autocomplete: "new-password"}) : null;
    var submit = el("button", {type: "submit", class: "btn btn-primary", id: prefix + "submit"}, button);
    var form = el("form", {class: "card account-form", id: prefix + "form", novalidate: true},
      el("h2", null, title),
      el("div", {class: "field"}, el("label", {for: prefix + "username"}, "User name"), user),
      el("div", {class: "field"}, el("label", {for: prefix + "password"}, "Password"), pass),
      repeat ? el("div", {class: "field"}, el("label", {for: prefix + "password2"}, "Password again"), pass2) : null,
      submit, errors);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      clear(errors);
      if (!user.value.trim() || !pass.value) {
        alertBox(errors, "Enter a user name and a password.");
        return;
      }
      if (repeat && pass.value !== pass2.value) {
        alertBox(errors, "The two passwords differ.");
        return;
      }
      submit.disabled = true;
      api("POST", "/api/" + kind, {json: {username: user.value.trim(), password: pass.value}}).then(function () {
        state.flash = repeat ? "Welcome! Your account is ready, and you are signed in." : null;
        return loadMe().then(function () { go("#/jobs"); });
      }, function (err) {
        submit.disabled = false;
        var msg = err.status === 401 ? "The user name or the password is wrong."
          : err.status === 429 ? "Too many attempts. Wait a minute, then try again."
          : err.message;
        alertBox(errors, msg).id = prefix + "error";
      });
    });
    return form;
  }

  // ---------------------------------------------------------------------------------------
  // The administrator's view of the queue and the workers

  function renderAdmin() {
    var v = view("Queue and workers", "The jobs waiting or running, and the worker processes that run them. " +
                 "Refreshed every few seconds.");
    var visit = state.visit;
    var box = el("div", {id: "admin"});
    v.root.appendChild(box);
    function refresh() {
      api("GET", "/api/admin/queue").then(function (q) {
        if (visit !== state.visit) return;
        clear(box);
        box.appendChild(el("h2", null, "Workers"));
        box.appendChild(plainTable(q.workers || [], "admin-workers", "No workers are running.",
                                   {heartbeat: fmtAgo}));
        box.appendChild(el("h2", null, "Queue"));
        box.appendChild(plainTable(q.jobs || [], "admin-queue", "The queue is empty.",
                                   {created: fmtTime, started: fmtTime, heartbeat: fmtAgo, status: badge, job: jobTitle,
                                    progress: function (p) { return p === null || p === undefined ? "" : Math.round(100 * p) + "%"; },
                                    id: function (id) { return el("code", null, String(id)); }}));
        state.timer = setTimeout(refresh, 3 * POLL_MS);
      }, function (e) {
        if (visit !== state.visit) return;
        clear(box);
        alertBox(box, e.status === 404 ? "This view is for administrators." : "The queue could not be read: " + e.message);
      });
    }
    refresh();
  }

  // A table of objects, one column per key (in order of first appearance).
  function plainTable(items, id, empty, formats) {
    if (!items.length) return el("p", {class: "empty"}, empty);
    var keys = [];
    items.forEach(function (it) { Object.keys(it).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    var head = el("tr");
    keys.forEach(function (k) { head.appendChild(el("th", {scope: "col"}, k)); });
    var body = el("tbody");
    items.forEach(function (it) {
      var tr = el("tr");
      keys.forEach(function (k) {
        var v = it[k];
        tr.appendChild(el("td", null, v === null || v === undefined ? "" : formats[k] ? formats[k](v) : fmtCell(v).text));
      });
      body.appendChild(tr);
    });
    return el("div", {class: "table-wrap card"}, el("table", {class: "data", id: id}, el("thead", null, head), body));
  }

  // ---------------------------------------------------------------------------------------
  // Help

  function renderHelp() {
    var v = view("Help", "fsgpu finds the features (genes, SNPs, measurements) that carry information about " +
                 "a class, such as tumour or normal, case or control. This page runs its analyses for you.");
    var r = v.root;
    r.appendChild(el("h2", null, "Your data"));
    r.appendChild(el("p", null, "One row per sample, one column per feature, and one column with the class. " +
      "The first line names the columns. For example, a CSV file:"));
    r.appendChild(el("pre", {class: "example"},
      "gene_A,gene_B,gene_C,status\n2.31,0.12,7.80,tumour\n1.02,0.35,6.11,normal\n2.97,0.09,8.02,tumour"));
    r.appendChild(el("p", null, "Tab-separated files, ARFF (Weka) and LibSVM files work the same way, also " +
      "compressed (.gz, .bz2, .xz). A file that cannot be read, such as a line with more or fewer values than " +
      "the first, is refused at once with a message that names the file and the line, so you can fix it. " +
      "A column that holds any text is taken as categories (as a factor in R); so is a column of whole numbers " +
      "with few values (codes such as 0, 1, 2) unless you ask for bins, and the setting categorical of the " +
      "selection and the pairs says otherwise where you need it. Missing values (empty cells, " +
      "NA) stop most analyses with a message that names the feature. Genotypes: upload the PLINK .bed, .bim " +
      "and .fam files and a phenotype file together."));
    r.appendChild(el("h2", null, "The analyses"));
    var dl = el("dl", {class: "facts help-jobs"});
    var keys = state.jobtypes ? jobKeys(state.jobtypes) : Object.keys(JOB_TEXT);
    keys.forEach(function (k) {
      var t = state.jobtypes && state.jobtypes[k];
      dl.appendChild(el("dt", null, (t && t.title) || k, t && t["function"] ? el("code", {class: "fn"}, " " + t["function"] + "()") : null));
      dl.appendChild(el("dd", null, (t && t.description) || JOB_TEXT[k] || ""));
    });
    r.appendChild(dl);
    r.appendChild(el("h2", null, "Results"));
    r.appendChild(el("p", null, "Each finished job shows its table (sortable), the plot that R draws for it, the " +
      "device it ran on and the time it took. Download the table as CSV, the R object, or an R script that " +
      "reproduces the result with the fsgpu package on your own computer."));
    r.appendChild(el("h2", null, "From a script"));
    r.appendChild(el("p", null, "The page uses a JSON API that scripts can use too:"));
    r.appendChild(el("pre", {class: "example"},
      "curl -F file=@data.csv -F job=select -F method=jmi -F k=10 " + location.origin + "/api/jobs\n" +
      "curl -H 'Authorization: Bearer TOKEN' " + location.origin + "/api/jobs/ID\n" +
      "curl -H 'Authorization: Bearer TOKEN' -o result.csv " + location.origin + "/api/jobs/ID/result.csv"));
    if (!state.jobtypes) loadJobtypes().then(function () { if (location.hash === "#/help") route(); }, function () {});
  }

  // ---------------------------------------------------------------------------------------
  // Routing

  function route() {
    state.visit++;
    if (state.timer) { clearTimeout(state.timer); state.timer = null; }
    var hash = location.hash || "#/new";
    var parts = hash.replace(/^#\/?/, "").split("/");
    var name = parts[0] || "new";
    Array.prototype.forEach.call(document.querySelectorAll(".nav a"), function (a) {
      if (a.getAttribute("data-route") === name) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    });
    if (name === "job" && parts[1]) renderJob(decodeURIComponent(parts.slice(1).join("/")));
    else if (name === "jobs") renderJobs();
    else if (name === "login") renderLogin();
    else if (name === "admin") renderAdmin();
    else if (name === "help") renderHelp();
    else renderNew();
    var h1 = document.querySelector("#view h1");
    if (h1 && state.visit > 1) h1.focus({preventScroll: false});
  }

  window.addEventListener("hashchange", route);
  document.addEventListener("DOMContentLoaded", function () {
    Promise.all([loadMe(), loadJobtypes().catch(function () { return null; })]).then(route);
  });
})();
