-- Drives fsmgen lsp from Neovim as a user would (TestNeovim runs it headless): open a
-- seed spec, type a typo, read the diagnostic, complete, take the did-you-mean fix,
-- hover, go to a definition, rename a guard, save. Each step writes "key<TAB>value" lines
-- to $RESULT; a failure writes "FAIL<TAB>why" and quits with status 1. Every wait has a
-- timeout that names what it waited for.
local fsmgen, spec, result = os.getenv("FSMGEN"), os.getenv("SPEC"), os.getenv("RESULT")
local lines = {}

local function record(key, value)
  lines[#lines + 1] = key .. "\t" .. tostring(value):gsub("\n", "\\n")
  local f = assert(io.open(result, "w"))
  f:write(table.concat(lines, "\n") .. "\n")
  f:close()
end

local function fail(why)
  record("FAIL", why)
  vim.cmd("cquit 1")
end

local function wait(what, ms, cond)
  if not vim.wait(ms, cond, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 0)
  end
end

local function text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- The (0-based) line and byte column of the first occurrence of needle.
local function find(buf, needle)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local s = l:find(needle, 1, true)
    if s then
      return i - 1, s - 1
    end
  end
  error("no " .. needle .. " in the buffer", 0)
end

local function request(buf, method, params, what)
  local res, err = vim.lsp.buf_request_sync(buf, method, params, 10000)
  if not res then
    error("no answer to " .. what .. ": " .. tostring(err), 0)
  end
  for _, r in pairs(res) do
    if r.error then
      error(what .. ": " .. r.error.message, 0)
    end
    return r.result
  end
  error("no answer to " .. what, 0)
end

local function at(buf, line, col)
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  return vim.lsp.util.make_position_params()
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(spec))
  local buf = vim.api.nvim_get_current_buf()
  local config = { name = "fsmgen", cmd = { fsmgen, "lsp" }, root_dir = vim.fn.fnamemodify(spec, ":h") }
  local id
  if vim.lsp.start then -- Neovim 0.8 and later
    id = vim.lsp.start(config)
  else
    id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, id)
  end
  wait("the server to initialize", 15000, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized
  end)
  record("started", vim.lsp.get_client_by_id(id).name)

  -- A typo, typed: "x" appended to a transition's target.
  local l, c = find(buf, "to: pending_review")
  vim.api.nvim_win_set_cursor(0, { l + 1, c + #"to: pending_review" - 1 })
  vim.api.nvim_feedkeys("ax" .. vim.api.nvim_replace_termcodes("<Esc>", true, false, true), "xt", false)
  local want = 'unknown state "pending_reviewx" (did you mean "pending_review"?)'
  local diag
  wait("the diagnostic of the typo", 15000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.message == want then
        diag = d
        return true
      end
    end
    return false
  end)
  record("diagnostic", string.format("%d:%d %s", diag.lnum + 1, diag.col + 1, diag.message))

  -- Completion at the typo: the states.
  local items = request(buf, "textDocument/completion", at(buf, diag.lnum, diag.col + 3), "completion")
  items = items.items or items
  local labels = {}
  for _, it in ipairs(items) do
    labels[#labels + 1] = it.label
  end
  table.sort(labels)
  record("completion", table.concat(labels, ","))

  -- The did-you-mean fix, applied.
  local params = at(buf, diag.lnum, diag.col)
  params.range = { start = params.position, ["end"] = params.position }
  params.context = { diagnostics = { {
    range = {
      start = { line = diag.lnum, character = diag.col },
      ["end"] = { line = diag.end_lnum, character = diag.end_col },
    },
    message = diag.message,
    severity = diag.severity,
  } } }
  local actions = request(buf, "textDocument/codeAction", params, "code actions")
  local fix
  for _, a in ipairs(actions) do
    if a.title == 'Change "pending_reviewx" to "pending_review"' then
      fix = a
    end
  end
  if not fix then
    error("no did-you-mean action among " .. vim.inspect(actions), 0)
  end
  vim.lsp.util.apply_workspace_edit(fix.edit, "utf-16")
  record("fixed", text(buf):find("to: pending_reviewx", 1, true) == nil)
  wait("the diagnostics to clear after the fix", 15000, function()
    return #vim.diagnostic.get(buf) == 0
  end)
  record("clean", true)

  -- Hover and definition of a guard used by a transition.
  l, c = find(buf, "if: [reviews_complete")
  local h = request(buf, "textDocument/hover", at(buf, l, c + 6), "hover")
  record("hover", h.contents.value:match("^[^\n]*"))
  local defs = request(buf, "textDocument/definition", at(buf, l, c + 6), "definition")
  record("definition", defs[1].range.start.line + 1)

  -- Rename the guard, as :lua vim.lsp.buf.rename() does it.
  vim.api.nvim_win_set_cursor(0, { l + 1, c + 6 })
  vim.lsp.buf.rename("enough_reviews")
  local function renamed()
    local _, n = text(buf):gsub("enough_reviews", "")
    return n
  end
  wait("the rename to be applied", 15000, function()
    return renamed() == 2
  end)
  record("renamed", renamed())

  -- Save: the file on disk has the fix and the rename, and the server checks it clean.
  vim.cmd("write")
  wait("the diagnostics after saving", 15000, function()
    return #vim.diagnostic.get(buf) == 0
  end)
  record("saved", true)
  vim.lsp.stop_client(id)
  wait("the server to stop", 10000, function()
    return vim.lsp.get_client_by_id(id) == nil
  end)
  record("stopped", true)
end

local ok, err = pcall(run)
if not ok then
  fail(tostring(err))
else
  record("done", true)
  vim.cmd("qa!")
end
