import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.nio.file.Paths;

/**
 * A tiny `helm` for the chart test: helm-java (Maven Central) embeds the real Helm Go library as
 * a native library, so `lint` and `template` here are Helm's own code, not a re-implementation.
 * Usage: java -cp 'lib/*:classes' HelmCli lint|template|version CHART [options]
 * (test/support/helm.ts compiles it into .cache/helm-java/classes)
 *   template options: --name N --namespace NS --kube-version V --set key=value (repeatable)
 * Prints Helm's output on stdout; a failure prints Helm's error on stderr and exits 1.
 */
public class HelmCli {
  public static void main(String[] args) {
    try {
      System.exit(run(args));
    } catch (Exception e) {
      System.err.println(e.getMessage());
      System.exit(1);
    }
  }

  static int run(String[] args) {
    if (args.length < 2) throw new IllegalArgumentException("usage: HelmCli lint|template CHART [options]");
    Helm helm = new Helm(Paths.get(args[1]));
    if (args[0].equals("version")) {
      System.out.println(Helm.version().call());
      return 0;
    }
    if (args[0].equals("lint")) {
      LintResult result = helm.lint().strict().call();
      result.getMessages().forEach(System.out::println);
      return result.isFailed() ? 1 : 0;
    }
    if (!args[0].equals("template")) throw new IllegalArgumentException("unknown command " + args[0]);
    TemplateCommand template = helm.template();
    for (int i = 2; i < args.length; i += 2) {
      if (i + 1 >= args.length) throw new IllegalArgumentException(args[i] + " needs a value");
      String value = args[i + 1];
      switch (args[i]) {
        case "--name" -> template = template.withName(value);
        case "--namespace" -> template = template.withNamespace(value);
        case "--kube-version" -> template = template.withKubeVersion(value);
        case "--set" -> {
          int eq = value.indexOf('=');
          if (eq < 1) throw new IllegalArgumentException("--set needs key=value, got " + value);
          template = template.set(value.substring(0, eq), value.substring(eq + 1));
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    System.out.print(template.call());
    return 0;
  }
}
