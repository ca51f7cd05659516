#include "wok/runtime/fragment.h"

#include <utility>

#include <sstream>

#include "wok/runtime/op_registry.h"

namespace wok {

std::string Fragment::str() const {
  std::ostringstream out;
  auto value = [&](int v) {
    out << "%" << v << ":" << dtype_name(values[v].dtype) << shape_str(values[v].shape);
  };
  out << "fragment(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) out << ", ";
    value(inputs[i]);
  }
  out << ")\n";
  for (const FragmentNode& n : nodes) {
    out << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (i) out << ", ";
      value(n.outputs[i]);
    }
    out << " = " << n.op->name() << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out << (i ? ", %" : "%") << n.inputs[i];
    if (n.attrs->size()) out << "; " << n.attrs->str();
    out << ")\n";
  }
  out << "  return";
  for (size_t i = 0; i < outputs.size(); ++i) out << (i ? ", %" : " %") << outputs[i];
  out << "\n";
  return out.str();
}

std::unique_ptr<OwnedFragment> own_fragment(const Fragment& f) {
  auto o = std::make_unique<OwnedFragment>();
  o->fragment = f;
  o->attrs.reserve(f.nodes.size());
  for (FragmentNode& n : o->fragment.nodes) {
    o->attrs.push_back(std::make_unique<Attrs>(*n.attrs));
    n.attrs = o->attrs.back().get();
  }
  return o;
}

std::vector<int> last_uses(const Fragment& fragment) {
  std::vector<int> last(fragment.values.size(), -1);
  for (size_t n = 0; n < fragment.nodes.size(); ++n)
    for (int v : fragment.nodes[n].inputs) last[v] = static_cast<int>(n);
  for (int v : fragment.outputs) last[v] = static_cast<int>(fragment.nodes.size());
  return last;
}

std::vector<StoragePtr> FragmentJob::input_storage() const {
  std::vector<StoragePtr> out;
  out.reserve(leaves.size());
  for (const TensorImplPtr& t : leaves) out.push_back(t->storage());
  return out;
}

void FragmentRunner::run_async(std::shared_ptr<FragmentJob> job, std::shared_ptr<AsyncResult> result) {
  StreamPool::global().next().enqueue([this, job, result] {
    try {
      result->outputs = run(job->fragment, job->input_storage());
      result->done.complete();
    } catch (...) {
      result->done.complete(std::current_exception());
    }
  });
}

namespace {
class RunEachTime final : public PreparedFragment {
 public:
  RunEachTime(FragmentRunner& runner, const Fragment& fragment) : runner_(runner), fragment_(fragment) {}
  std::vector<StoragePtr> run(std::span<const StoragePtr> input_storage) override {
    return runner_.run(fragment_, input_storage);
  }

 private:
  FragmentRunner& runner_;
  const Fragment& fragment_;
};
}  // namespace

std::unique_ptr<PreparedFragment> FragmentRunner::prepare(const Fragment& fragment) {
  return std::make_unique<RunEachTime>(*this, fragment);
}

}  // namespace wok

namespace wok {
namespace {
thread_local std::string_view t_delegate;
}  // namespace
void set_fragment_delegate(std::string_view runner) { t_delegate = runner; }
std::string_view take_fragment_delegate() { return std::exchange(t_delegate, std::string_view{}); }
}  // namespace wok
