/**
 * Where the code interpreter may send requests: the package hosts the user turned on (Settings → "Code
 * interpreter packages", web/app/package_hosts.js), as origins for the sandbox's policy and for the list
 * the user reads before any request goes out.
 *
 *   hostsOf({indexes: [url], pyodide: url | null}) -> [origin]
 *   PYPI   the preset index
 */

export const PYPI = "https://pypi.org/simple";

/**
 * The origins requests may go to: each index's and the repository's, and PyPI's file host with PyPI.
 * @param {Partial<import("./messages.js").PackageHosts>} hosts
 * @returns {string[]}
 */
export function hostsOf({ indexes = [], pyodide = null }) {
  const hosts = new Set();
  for (const url of [...indexes, ...(pyodide ? [pyodide] : [])]) {
    const origin = new URL(url).origin;
    hosts.add(origin);
    if (origin === "https://pypi.org") hosts.add("https://files.pythonhosted.org"); // where PyPI keeps the files
  }
  return [...hosts];
}

